-- +goose Up
-- When each send was recorded, for a push's recipients export (DESIGN 15,
-- sentAt): a chunk's settle_log holds, per step that moved its cursor,
-- "settled:ms;" (the slots before settled, from the previous entry's on,
-- were settled at ms); a delivery row's at is when it was written. Sends
-- recorded before this migration have no time (sentAt null).
ALTER TABLE push_chunks ADD COLUMN settle_log TEXT NOT NULL DEFAULT '';
ALTER TABLE deliveries ADD COLUMN at INTEGER;

-- +goose Down
ALTER TABLE deliveries DROP COLUMN at;
ALTER TABLE push_chunks DROP COLUMN settle_log;
