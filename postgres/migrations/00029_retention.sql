-- +goose Up
-- Retention (DESIGN section 12): a push finished longer ago than
-- HERALD_RETENTION_DAYS loses its body and the rows its send left; the
-- record stays. expired_at is when its body was cleared. Its counts, which
-- were summed from those rows, are kept in push_counts, written in the
-- transaction that sets expired_at; the rows then go in small batches,
-- the pushes still to empty listed in retention_queue.
ALTER TABLE pushes ADD COLUMN expired_at BIGINT;
CREATE INDEX pushes_finished ON pushes (finished_at) WHERE finished_at IS NOT NULL AND expired_at IS NULL;
CREATE TABLE push_counts (
    push_id            TEXT COLLATE "C" PRIMARY KEY REFERENCES pushes (id) ON DELETE CASCADE,
    tokens             BIGINT NOT NULL,
    sent               BIGINT NOT NULL,
    failed             BIGINT NOT NULL,
    suppressed_consent BIGINT NOT NULL,
    suppressed_night   BIGINT NOT NULL,
    unreachable        BIGINT NOT NULL,
    badge_unsupported  BIGINT NOT NULL,
    image_unsupported  BIGINT NOT NULL
);
CREATE TABLE retention_queue (
    push_id TEXT COLLATE "C" PRIMARY KEY REFERENCES pushes (id) ON DELETE CASCADE
);
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
