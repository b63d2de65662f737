-- +goose Up
-- send_rate_per_minute: the app's FCM sends are paced to this rate, all
-- its pushes together (default FCM's quota per project).
ALTER TABLE apps ADD COLUMN send_rate_per_minute INTEGER NOT NULL DEFAULT 600000;
-- nodes: each herald serve notes here every few seconds that it is alive
-- (seen_at in Unix milliseconds), so that the nodes share an app's send
-- rate among those alive.
CREATE TABLE nodes (
    id      TEXT PRIMARY KEY,
    seen_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE nodes;
ALTER TABLE apps DROP COLUMN send_rate_per_minute;
