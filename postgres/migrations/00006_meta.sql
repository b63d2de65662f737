-- +goose Up
-- meta holds single values about the store itself: the readiness probe's
-- heartbeat and the master key's check value.
CREATE TABLE meta (
    name       TEXT COLLATE "C" PRIMARY KEY,
    value      BYTEA NOT NULL,
    updated_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE meta;
