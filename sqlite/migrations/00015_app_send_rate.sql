-- +goose Up
-- send_rate_per_minute: the app's FCM sends are paced to this rate, all
-- its pushes together (default FCM's quota per project).
ALTER TABLE apps ADD COLUMN send_rate_per_minute INTEGER NOT NULL DEFAULT 600000;
-- nodes: each herald serve on PostgreSQL notes here every few seconds that
-- it is alive, so that the nodes share an app's send rate among those
-- alive. Kept in both engines' schemas alike; SQLite has one node and
-- writes nothing here.
CREATE TABLE nodes (
    id      TEXT PRIMARY KEY,
    seen_at INTEGER NOT NULL
);

-- +goose Down
DROP TABLE nodes;
ALTER TABLE apps DROP COLUMN send_rate_per_minute;
