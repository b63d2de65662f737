-- +goose Up
-- Local-time pushes (options.localTime with scheduleTime, DESIGN 14):
-- local_time marks one, whose scheduled_at is when its first zone
-- (UTC+14) reaches the wall-clock time; late_local counts its devices
-- sent at once because their zone's time had passed at accept. A zone
-- part is a chunk with zone_part set: its send job runs at deferred_until,
-- the instant its devices' zone reaches the wall-clock time.
ALTER TABLE pushes ADD COLUMN local_time INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pushes ADD COLUMN late_local INTEGER NOT NULL DEFAULT 0;
ALTER TABLE push_chunks ADD COLUMN zone_part INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE push_chunks DROP COLUMN zone_part;
ALTER TABLE pushes DROP COLUMN late_local;
ALTER TABLE pushes DROP COLUMN local_time;
