-- +goose Up
-- Retention (DESIGN section 12): a push finished longer ago than
-- HERALD_RETENTION_DAYS loses its body and the rows its send left; the
-- record stays. expired_at is when its body was cleared. Its counts, which
-- were summed from those rows, are kept in push_counts, written in the
-- transaction that sets expired_at; the rows then go in small batches,
-- the pushes still to empty listed in retention_queue.
ALTER TABLE pushes ADD COLUMN expired_at INTEGER;
CREATE INDEX pushes_finished ON pushes (finished_at) WHERE finished_at IS NOT NULL AND expired_at IS NULL;
CREATE TABLE push_counts (
    push_id            TEXT PRIMARY KEY REFERENCES pushes (id) ON DELETE CASCADE,
    tokens             INTEGER NOT NULL,
    sent               INTEGER NOT NULL,
    failed             INTEGER NOT NULL,
    suppressed_consent INTEGER NOT NULL,
    suppressed_night   INTEGER NOT NULL,
    unreachable        INTEGER NOT NULL,
    badge_unsupported  INTEGER NOT NULL,
    image_unsupported  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE retention_queue (
    push_id TEXT PRIMARY KEY REFERENCES pushes (id) ON DELETE CASCADE
) WITHOUT ROWID;
-- The consent trail keeps each pair's latest record and 730 days of the
-- rest: the old ones are found by time, a device's records without a
-- user by device.
CREATE INDEX consent_changes_at ON consent_changes (at);
CREATE INDEX consent_changes_device ON consent_changes (app_id, device_id, id) WHERE user_id IS NULL;

-- +goose Down
DROP INDEX consent_changes_device;
DROP INDEX consent_changes_at;
DROP TABLE retention_queue;
DROP TABLE push_counts;
DROP INDEX pushes_finished;
ALTER TABLE pushes DROP COLUMN expired_at;
