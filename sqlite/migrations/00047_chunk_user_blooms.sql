-- +goose Up
-- PostgreSQL finds a chunk's users by a Bloom filter of them kept here
-- (its migration 47). SQLite finds them in user_pushes, kept by the
-- trigger of migration 43, and leaves this table empty: it is here so
-- that both engines have one schema.
CREATE TABLE chunk_user_blooms (
    push_id TEXT NOT NULL,
    chunk   INTEGER NOT NULL,
    bloom   BLOB NOT NULL,
    PRIMARY KEY (push_id, chunk),
    FOREIGN KEY (push_id, chunk) REFERENCES push_chunks (push_id, chunk) ON DELETE CASCADE
) WITHOUT ROWID;

-- +goose Down
DROP TABLE chunk_user_blooms;
