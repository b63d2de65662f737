-- +goose Up
-- Events a device reported while its send of the push was in flight (the
-- app had the message before Herald recorded FCM's answer): kept here,
-- not counted, until the send is recorded. chunk and pos are where the
-- device's slot stands (a retry chunk's once the slot moves to one), seq
-- the slot's. ready: the send was recorded sent; the event moves to
-- push_events with the next promotion (or the push's finish). A send
-- recorded as anything else drops the event; the push's finish drops
-- those left.
CREATE TABLE push_pending_events (
    push_id   TEXT NOT NULL REFERENCES pushes (id) ON DELETE CASCADE,
    device_id TEXT NOT NULL,
    type      TEXT NOT NULL,
    at        INTEGER NOT NULL,
    chunk     INTEGER NOT NULL,
    pos       INTEGER NOT NULL,
    seq       INTEGER NOT NULL,
    ready     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (push_id, device_id, type)
) WITHOUT ROWID;
CREATE INDEX push_pending_events_chunk ON push_pending_events (push_id, chunk);
-- pending_events: the chunk may hold pending events (set with the first,
-- cleared once a step settled them all), so that a step of a chunk with
-- none, nearly every step, reads nothing more.
ALTER TABLE push_chunks ADD COLUMN pending_events INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE push_chunks DROP COLUMN pending_events;
DROP TABLE push_pending_events;
