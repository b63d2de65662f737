-- +goose Up
-- What devices report about the pushes sent to them (POST
-- /api/sdk/v2/events): one row per push, device and type ('received' or
-- 'opened'), so that each counts once however often the app retries; at
-- is when the device says it happened (ms). The push keeps the running
-- counts, raised in the transaction that records the rows, so history
-- reads two columns instead of counting rows.
CREATE TABLE push_events (
    push_id   TEXT NOT NULL REFERENCES pushes (id) ON DELETE CASCADE,
    device_id TEXT NOT NULL,
    type      TEXT NOT NULL,
    at        INTEGER NOT NULL,
    PRIMARY KEY (push_id, device_id, type)
) WITHOUT ROWID;
ALTER TABLE pushes ADD COLUMN events_received INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pushes ADD COLUMN events_opened INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE pushes DROP COLUMN events_opened;
ALTER TABLE pushes DROP COLUMN events_received;
DROP TABLE push_events;
