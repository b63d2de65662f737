-- +goose Up
-- Dashboard sessions, kept in the database so that a session made on one
-- node works on every node and signing out ends it everywhere. id is a
-- hash of the cookie's nonce, never the cookie itself.
CREATE TABLE sessions (
    id         TEXT COLLATE "C" PRIMARY KEY,
    expires_at BIGINT NOT NULL
);
CREATE INDEX sessions_expires ON sessions (expires_at);

-- +goose Down
DROP TABLE sessions;
