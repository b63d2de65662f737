-- +goose Up
-- open_chunks counts a push's send chunks not yet complete. Completing a
-- chunk decrements it with RETURNING, so exactly one completion (the last)
-- sees zero and queues the push's finish, however many run at once.
ALTER TABLE pushes ADD COLUMN open_chunks INTEGER NOT NULL DEFAULT 0;
UPDATE pushes SET open_chunks = (SELECT COUNT(*) FROM push_chunks c WHERE c.push_id = pushes.id AND NOT c.done);

-- +goose Down
ALTER TABLE pushes DROP COLUMN open_chunks;
