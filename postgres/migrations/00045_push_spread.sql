-- +goose Up
-- options.spreadMinutes: a push's users are sent evenly over that many
-- minutes from its start (0: not spread). spread_users is how many users
-- its fan-out counted at its start (each device no user is mapped to as
-- one): the k-th user is due at started_at + k/spread_users of the
-- minutes, read from these columns by every run, so a restart keeps the
-- schedule.
ALTER TABLE pushes ADD COLUMN spread_minutes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pushes ADD COLUMN spread_users INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE pushes DROP COLUMN spread_users;
ALTER TABLE pushes DROP COLUMN spread_minutes;
