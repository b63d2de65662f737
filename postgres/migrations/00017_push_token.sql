-- +goose Up
-- A token push (a test push from the admin API) keeps the token it goes to;
-- the fan-out finds the device that holds it then.
ALTER TABLE pushes ADD COLUMN token TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE pushes DROP COLUMN token;
