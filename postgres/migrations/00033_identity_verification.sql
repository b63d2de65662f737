-- +goose Up
-- Identity verification (DESIGN section 7): when identity_verification
-- is on, the SDK calls that bind a device or a consent change to a userId
-- carry an HMAC of the userId under identity_secret (sealed with the
-- master key; NULL until the admin API issues one). identity_refusals
-- counts the calls refused for a missing or wrong token, one UPDATE
-- adding one each.
ALTER TABLE apps ADD COLUMN identity_verification BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE apps ADD COLUMN identity_secret BYTEA;
-- The secret a rotation replaced, which keeps verifying for 24 hours
-- after identity_rotated_at (Unix ms), so that back ends can switch.
ALTER TABLE apps ADD COLUMN identity_previous BYTEA;
ALTER TABLE apps ADD COLUMN identity_rotated_at BIGINT;
ALTER TABLE apps ADD COLUMN identity_refusals BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE apps DROP COLUMN identity_refusals;
ALTER TABLE apps DROP COLUMN identity_rotated_at;
ALTER TABLE apps DROP COLUMN identity_previous;
ALTER TABLE apps DROP COLUMN identity_secret;
ALTER TABLE apps DROP COLUMN identity_verification;
