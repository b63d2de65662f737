-- +goose Up
-- The consent trail: every change (or re-confirmation) of a user's or a
-- device's marketing pair, kept through withdrawal. user_id is the user
-- whose pair changed or to whom the device was mapped (NULL for a device
-- mapped to nobody); seq numbers one user's records in order. event is the
-- record's consent.changed webhook event: '' (none), 'pending', 'sent' or
-- 'dropped' (given up, or the webhook was removed).
CREATE TABLE consent_changes (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    app_id         TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    user_id        TEXT,
    seq            INTEGER NOT NULL DEFAULT 0,
    device_id      TEXT,
    at             INTEGER NOT NULL,
    source         TEXT NOT NULL,
    marketing_from INTEGER NOT NULL,
    marketing_to   INTEGER NOT NULL,
    night_from     INTEGER NOT NULL,
    night_to       INTEGER NOT NULL,
    event          TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX consent_changes_user ON consent_changes (app_id, user_id, seq) WHERE user_id IS NOT NULL;
CREATE INDEX consent_changes_pending ON consent_changes (app_id, user_id, seq) WHERE event = 'pending';

-- consent_seq is the seq of the user's last record. consent_confirmed_at
-- is when marketing consent was last given or confirmed for the user, and
-- consent_due_at two years after it, when it must be confirmed again.
ALTER TABLE users ADD COLUMN consent_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN consent_confirmed_at INTEGER;
ALTER TABLE users ADD COLUMN consent_due_at INTEGER;
CREATE INDEX users_consent_due ON users (app_id, consent_due_at, user_id) WHERE consent_due_at IS NOT NULL;

-- When marketing consent was last given or confirmed on the device; a
-- device mapped to a user brings it along.
ALTER TABLE devices ADD COLUMN consent_confirmed_at INTEGER;

-- +goose Down
ALTER TABLE devices DROP COLUMN consent_confirmed_at;
DROP INDEX users_consent_due;
ALTER TABLE users DROP COLUMN consent_due_at;
ALTER TABLE users DROP COLUMN consent_confirmed_at;
ALTER TABLE users DROP COLUMN consent_seq;
DROP TABLE consent_changes;
