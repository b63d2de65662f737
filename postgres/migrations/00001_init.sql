-- +goose Up
-- The PostgreSQL twin of sqlite/migrations: the same tables, columns and
-- indexes under the same version numbers. Times are BIGINT milliseconds,
-- flags BOOLEAN, sealed values BYTEA. Identifiers compare and sort
-- byte-wise (COLLATE "C"), as SQLite's do, whatever the database's
-- collation: ids are base62 and pages are cut on them.
CREATE TABLE apps (
    id                      TEXT COLLATE "C" PRIMARY KEY,
    name                    TEXT NOT NULL,
    api_key                 TEXT COLLATE "C" NOT NULL UNIQUE,
    secret_hash             BYTEA NOT NULL,
    tier                    TEXT NOT NULL,
    app_user_enabled        BOOLEAN NOT NULL DEFAULT FALSE,
    registered              BOOLEAN NOT NULL DEFAULT TRUE,
    time_zone               TEXT NOT NULL,
    default_marketing       BOOLEAN NOT NULL DEFAULT FALSE,
    default_marketing_night BOOLEAN NOT NULL DEFAULT FALSE,
    fcm_credentials         BYTEA,
    webhook_url             TEXT NOT NULL DEFAULT '',
    webhook_secret          BYTEA,
    created_at              BIGINT NOT NULL
);

CREATE TABLE users (
    app_id          TEXT COLLATE "C" NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    user_id         TEXT COLLATE "C" NOT NULL,
    state           TEXT NOT NULL,
    marketing       BOOLEAN NOT NULL DEFAULT FALSE,
    marketing_night BOOLEAN NOT NULL DEFAULT FALSE,
    consent_set     BOOLEAN NOT NULL DEFAULT FALSE,
    created_at      BIGINT NOT NULL,
    withdrawn_at    BIGINT,
    PRIMARY KEY (app_id, user_id)
);

CREATE TABLE devices (
    app_id             TEXT COLLATE "C" NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    device_id          TEXT COLLATE "C" NOT NULL,
    token              TEXT COLLATE "C" NOT NULL,
    platform           TEXT NOT NULL,
    app_source_version TEXT NOT NULL,
    user_id            TEXT COLLATE "C",
    marketing          BOOLEAN NOT NULL,
    marketing_night    BOOLEAN NOT NULL,
    created_at         BIGINT NOT NULL,
    token_updated_at   BIGINT NOT NULL,
    PRIMARY KEY (app_id, device_id)
);
CREATE UNIQUE INDEX devices_token ON devices (app_id, token);
CREATE INDEX devices_user ON devices (app_id, user_id) WHERE user_id IS NOT NULL;

CREATE TABLE device_topics (
    app_id    TEXT COLLATE "C" NOT NULL,
    device_id TEXT COLLATE "C" NOT NULL,
    topic     TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (app_id, device_id, topic),
    FOREIGN KEY (app_id, device_id) REFERENCES devices (app_id, device_id) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE device_topics;
DROP TABLE devices;
DROP TABLE users;
DROP TABLE apps;
