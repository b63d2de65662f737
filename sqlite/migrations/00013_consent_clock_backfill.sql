-- +goose Up
-- Consent given before the consent trail existed has no clock: without
-- one, its user would never be listed as due for re-confirmation. It is
-- taken as given when the user (or the device) was registered, the
-- earliest it can have been, so the estimate errs towards asking early;
-- two years are counted as 730 days here (the app's calendar is not at
-- hand in SQL), which is never later than two calendar years.
UPDATE devices SET consent_confirmed_at = created_at
WHERE consent_confirmed_at IS NULL AND marketing;

UPDATE users SET consent_confirmed_at = created_at, consent_due_at = created_at + 63072000000
WHERE consent_confirmed_at IS NULL AND state = 'registered'
  AND (marketing OR EXISTS (SELECT 1 FROM devices d WHERE d.app_id = users.app_id AND d.user_id = users.user_id AND d.marketing));

-- +goose Down
-- The estimates cannot be told from real confirmations; they stay.
SELECT 1;
