-- +goose Up
-- When the app's FCM credentials were stored, for the operator's app page.
ALTER TABLE apps ADD COLUMN fcm_credentials_at BIGINT;

-- +goose Down
ALTER TABLE apps DROP COLUMN fcm_credentials_at;
