-- +goose Up
-- A chunk's users, for a user's export: a JSON array of the distinct
-- users its slots hold, written with the chunk, found by a GIN index
-- instead of a row of user_pushes per user. One row per user cost a heap
-- tuple and two index entries, most of a delivery's WAL; a chunk's array
-- is one value, and the index (its keys 4-byte hashes, jsonb_path_ops,
-- each found row rechecked) gathers its new entries in its pending list
-- and writes them into its tree in bulk. The entries go with the chunk's
-- row (retention, DeleteApp's cascade). user_pushes keeps only the users
-- of deliveries that were final at the fan-out (rows, in a chunk without
-- slots of theirs), and the rows of pushes fanned out before this
-- migration whose chunk is gone.
ALTER TABLE push_chunks ADD COLUMN users JSONB;
UPDATE push_chunks c SET users = u.users
    FROM (SELECT push_id, chunk, jsonb_agg(user_id ORDER BY user_id) AS users FROM user_pushes GROUP BY push_id, chunk) u
    WHERE u.push_id = c.push_id AND u.chunk = c.chunk;
DELETE FROM user_pushes up WHERE EXISTS (SELECT 1 FROM push_chunks c WHERE c.push_id = up.push_id AND c.chunk = up.chunk);
CREATE INDEX push_chunks_users ON push_chunks USING GIN (users jsonb_path_ops);
-- A chunk's row is updated at every window of its sends (settled,
-- marked): each update writes the row's inline part to the WAL again.
-- Its slots and users, compressed, go out of line past 128 bytes (not
-- 2 kB), so that an update writes their TOAST pointers, not a kilobyte
-- of users; and a tenth of each page is kept free, so that the update
-- finds room beside the row and stays HOT (no index entry, the WAL of
-- the change alone).
ALTER TABLE push_chunks SET (toast_tuple_target = 128, fillfactor = 90);

-- +goose Down
ALTER TABLE push_chunks RESET (toast_tuple_target, fillfactor);
DROP INDEX push_chunks_users;
INSERT INTO user_pushes (app_id, user_id, push_id, chunk)
    SELECT p.app_id, u.user_id, c.push_id, c.chunk FROM push_chunks c JOIN pushes p ON p.id = c.push_id
    CROSS JOIN LATERAL jsonb_array_elements_text(c.users) AS u(user_id) WHERE c.users IS NOT NULL
    ON CONFLICT DO NOTHING;
ALTER TABLE push_chunks DROP COLUMN users;
