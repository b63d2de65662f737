-- +goose Up
-- options.ttl: how many seconds FCM keeps each message of the push for a
-- device that is offline, counted from its send; NULL when not given.
ALTER TABLE pushes ADD COLUMN ttl INTEGER;

-- +goose Down
ALTER TABLE pushes DROP COLUMN ttl;
