-- +goose Up
-- The schedule watch takes up send work a run left part-way (DESIGN 6):
-- fanout_at is when a push's fan-out last recorded a page, moved_at when a
-- chunk's range last moved (ms); work begun, unfinished and untouched for
-- long is a stopped run's. The partial indexes serve the watch's looks.
ALTER TABLE pushes ADD COLUMN fanout_at BIGINT;
UPDATE pushes SET fanout_at = started_at WHERE status = 'sending' AND fanout_done = FALSE;
ALTER TABLE push_chunks ADD COLUMN moved_at BIGINT;
CREATE INDEX pushes_fanout_open ON pushes (fanout_at) WHERE status = 'sending' AND fanout_done = FALSE;
CREATE INDEX push_chunks_deferred ON push_chunks (deferred_until) WHERE deferred_until IS NOT NULL AND done = FALSE;

-- +goose Down
DROP INDEX push_chunks_deferred;
DROP INDEX pushes_fanout_open;
ALTER TABLE push_chunks DROP COLUMN moved_at;
ALTER TABLE pushes DROP COLUMN fanout_at;
