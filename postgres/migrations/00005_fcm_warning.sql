-- +goose Up
-- The last time FCM refused something about an app's credentials (its
-- access token, or the project's APNs / web-push credentials), so the
-- operator's app page can warn about it. Cleared by new credentials.
ALTER TABLE apps ADD COLUMN fcm_warning TEXT NOT NULL DEFAULT '';
ALTER TABLE apps ADD COLUMN fcm_warning_at BIGINT;

-- +goose Down
ALTER TABLE apps DROP COLUMN fcm_warning_at;
ALTER TABLE apps DROP COLUMN fcm_warning;
