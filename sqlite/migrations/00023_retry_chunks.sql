-- +goose Up
-- One send path: a retriable send, or one a crash cut off, is settled into
-- a retry chunk (a new chunk of the push with its own send job) instead of
-- an open delivery row; delivery rows are written once, with an outcome.
-- sent counts a chunk's slots settled as sent without a row, so a push's
-- counts add up chunks and rows without a slot counted twice; rows of
-- chunk slots (slot = 1) stood in for slots settled before this.
-- retry_chunks numbers a push's retry chunks: -1, -2, … below the
-- fan-out's, which count up from 0.
ALTER TABLE push_chunks ADD COLUMN sent INTEGER NOT NULL DEFAULT 0;
UPDATE push_chunks SET sent = settled - (SELECT COUNT(*) FROM deliveries d
    WHERE d.push_id = push_chunks.push_id AND d.chunk = push_chunks.chunk AND d.slot = 1);
ALTER TABLE pushes ADD COLUMN retry_chunks INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE pushes DROP COLUMN retry_chunks;
ALTER TABLE push_chunks DROP COLUMN sent;
