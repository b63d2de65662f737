-- +goose Up
-- options.priority: "high" pushes (one-time codes and the like) ride a
-- lane of their own ahead of the project's normal pushes; "normal" for
-- every other.
ALTER TABLE pushes ADD COLUMN priority TEXT NOT NULL DEFAULT 'normal';

-- +goose Down
ALTER TABLE pushes DROP COLUMN priority;
