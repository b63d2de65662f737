-- +goose Up
-- A chunk's users, as on PostgreSQL (see its migration 43): a JSON array
-- of the distinct users its slots hold, written with the chunk. SQLite
-- has no index into the array: a trigger keeps user_pushes's row per user
-- from it, which the export reads as before, and which retention and
-- DeleteApp delete as before.
ALTER TABLE push_chunks ADD COLUMN users TEXT;

-- +goose StatementBegin
CREATE TRIGGER push_chunks_users AFTER INSERT ON push_chunks WHEN NEW.users IS NOT NULL
BEGIN
    INSERT INTO user_pushes (app_id, user_id, push_id, chunk)
        SELECT p.app_id, u.value, NEW.push_id, NEW.chunk FROM pushes p, json_each(NEW.users) u WHERE p.id = NEW.push_id
        ON CONFLICT DO NOTHING;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER push_chunks_users;
ALTER TABLE push_chunks DROP COLUMN users;
