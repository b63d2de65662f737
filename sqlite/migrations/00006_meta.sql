-- +goose Up
-- meta holds single values about the store itself: the readiness probe's
-- heartbeat and the master key's check value.
CREATE TABLE meta (
    name       TEXT PRIMARY KEY,
    value      BLOB NOT NULL,
    updated_at INTEGER NOT NULL
);

-- +goose Down
DROP TABLE meta;
