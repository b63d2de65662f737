-- +goose Up
-- A topic or all-users push reads its devices page by page, each page
-- recorded with its chunks in one transaction: the fan-out's cursor is kept
-- with the push so a run that dies resumes where the last page ended.
-- Pushes fanned out before this were fanned out whole.
ALTER TABLE pushes ADD COLUMN fanout_done INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pushes ADD COLUMN fanout_mapped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pushes ADD COLUMN fanout_user TEXT NOT NULL DEFAULT '';
ALTER TABLE pushes ADD COLUMN fanout_device TEXT NOT NULL DEFAULT '';
ALTER TABLE pushes ADD COLUMN fanout_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pushes ADD COLUMN fanout_chunk INTEGER NOT NULL DEFAULT 0;
UPDATE pushes SET fanout_done = 1 WHERE started_at IS NOT NULL;

-- The order of the pages: unmapped devices by id, then mapped ones by user
-- and id.
CREATE INDEX devices_unmapped ON devices (app_id, device_id) WHERE user_id IS NULL;
CREATE INDEX devices_user_device ON devices (app_id, user_id, device_id) WHERE user_id IS NOT NULL;
DROP INDEX devices_user;

-- +goose Down
CREATE INDEX devices_user ON devices (app_id, user_id) WHERE user_id IS NOT NULL;
DROP INDEX devices_user_device;
DROP INDEX devices_unmapped;
ALTER TABLE pushes DROP COLUMN fanout_chunk;
ALTER TABLE pushes DROP COLUMN fanout_seq;
ALTER TABLE pushes DROP COLUMN fanout_device;
ALTER TABLE pushes DROP COLUMN fanout_user;
ALTER TABLE pushes DROP COLUMN fanout_mapped;
ALTER TABLE pushes DROP COLUMN fanout_done;
