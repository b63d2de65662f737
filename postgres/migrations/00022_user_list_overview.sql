-- +goose Up
-- The users list shows when each user's record last changed (registration,
-- a consent change of the user or its devices, withdrawal); existing users
-- take the latest of the times already kept.
ALTER TABLE users ADD COLUMN updated_at BIGINT NOT NULL DEFAULT 0;
UPDATE users SET updated_at = GREATEST(created_at, COALESCE(withdrawn_at, 0),
    COALESCE((SELECT MAX(c.at) FROM consent_changes c WHERE c.app_id = users.app_id AND c.user_id = users.user_id), 0));
-- The overview sums the pushes an app created in the last 1, 7 or 30 days.
CREATE INDEX pushes_app_created ON pushes (app_id, created_at);

-- +goose Down
DROP INDEX pushes_app_created;
ALTER TABLE users DROP COLUMN updated_at;
