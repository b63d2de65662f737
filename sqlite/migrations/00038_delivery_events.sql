-- +goose Up
-- Delivery events (DESIGN section 15): each app's queue of what happened
-- to its pushes on each device (push.sent, push.failed, push.received,
-- push.opened), written by the transaction that records the outcome or
-- the device's report, read and removed in id order by the app's
-- dispatcher. id orders an app's events and names each (evt_<id>, never
-- reused: AUTOINCREMENT); at is the event's time, queued_at when it was
-- written (pruned after 7 days). No foreign key to apps: a check of the
-- app's row on every insert would cost each send window a look-up;
-- deleting an app deletes its events itself.
CREATE TABLE delivery_events (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    app_id           TEXT NOT NULL,
    type             TEXT NOT NULL,
    push_id          TEXT NOT NULL,
    request_group_id TEXT NOT NULL DEFAULT '',
    user_id          TEXT NOT NULL DEFAULT '',
    device_id        TEXT NOT NULL,
    token_suffix     TEXT NOT NULL DEFAULT '',
    reason           TEXT NOT NULL DEFAULT '',
    at               INTEGER NOT NULL,
    queued_at        INTEGER NOT NULL
);
CREATE INDEX delivery_events_app ON delivery_events (app_id, id);
-- The lease of an app's queue (one dispatcher across nodes sends it) and
-- its failed messages in a row, with when the next may be tried.
CREATE TABLE delivery_event_streams (
    app_id     TEXT PRIMARY KEY,
    holder     TEXT NOT NULL DEFAULT '',
    held_until INTEGER NOT NULL DEFAULT 0,
    failures   INTEGER NOT NULL DEFAULT 0,
    retry_at   INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
-- webhook_events: the app's webhookEvents as a JSON array; NULL for the
-- default list.
ALTER TABLE apps ADD COLUMN webhook_events TEXT;

-- +goose Down
ALTER TABLE apps DROP COLUMN webhook_events;
DROP TABLE delivery_event_streams;
DROP TABLE delivery_events;
