-- +goose Up
-- Delivery events (DESIGN section 15): each app's queue of what happened
-- to its pushes on each device (push.sent, push.failed, push.received,
-- push.opened), written by the transaction that records the outcome or
-- the device's report, read and removed in id order by the app's
-- dispatcher. id orders an app's events and names each (evt_<id>); at is
-- the event's time, queued_at when it was written (pruned after 7 days).
-- No foreign key to apps: its check would lock the app's row (FOR KEY
-- SHARE) from every send window at once; deleting an app deletes its
-- events itself.
CREATE TABLE delivery_events (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id           TEXT COLLATE "C" NOT NULL,
    type             TEXT NOT NULL,
    push_id          TEXT NOT NULL,
    request_group_id TEXT NOT NULL DEFAULT '',
    user_id          TEXT NOT NULL DEFAULT '',
    device_id        TEXT NOT NULL,
    token_suffix     TEXT NOT NULL DEFAULT '',
    reason           TEXT NOT NULL DEFAULT '',
    at               BIGINT NOT NULL,
    queued_at        BIGINT NOT NULL
);
CREATE INDEX delivery_events_app ON delivery_events (app_id, id);
-- The lease of an app's queue (one dispatcher across nodes sends it) and
-- its failed messages in a row, with when the next may be tried.
CREATE TABLE delivery_event_streams (
    app_id     TEXT COLLATE "C" PRIMARY KEY,
    holder     TEXT NOT NULL DEFAULT '',
    held_until BIGINT NOT NULL DEFAULT 0,
    failures   INTEGER NOT NULL DEFAULT 0,
    retry_at   BIGINT NOT NULL DEFAULT 0
);
-- webhook_events: the app's webhookEvents as a JSON array; NULL for the
-- default list.
ALTER TABLE apps ADD COLUMN webhook_events TEXT;

-- +goose Down
ALTER TABLE apps DROP COLUMN webhook_events;
DROP TABLE delivery_event_streams;
DROP TABLE delivery_events;
