-- +goose Up
CREATE TABLE apps (
    id                      TEXT PRIMARY KEY,
    name                    TEXT NOT NULL,
    api_key                 TEXT NOT NULL UNIQUE,
    secret_hash             BLOB NOT NULL,
    tier                    TEXT NOT NULL,
    app_user_enabled        INTEGER NOT NULL DEFAULT 0,
    registered              INTEGER NOT NULL DEFAULT 1,
    time_zone               TEXT NOT NULL,
    default_marketing       INTEGER NOT NULL DEFAULT 0,
    default_marketing_night INTEGER NOT NULL DEFAULT 0,
    fcm_credentials         BLOB,
    webhook_url             TEXT NOT NULL DEFAULT '',
    webhook_secret          BLOB,
    created_at              INTEGER NOT NULL
);

CREATE TABLE users (
    app_id          TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    user_id         TEXT NOT NULL,
    state           TEXT NOT NULL,
    marketing       INTEGER NOT NULL DEFAULT 0,
    marketing_night INTEGER NOT NULL DEFAULT 0,
    consent_set     INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    withdrawn_at    INTEGER,
    PRIMARY KEY (app_id, user_id)
);

CREATE TABLE devices (
    app_id             TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    device_id          TEXT NOT NULL,
    token              TEXT NOT NULL,
    platform           TEXT NOT NULL,
    app_source_version TEXT NOT NULL,
    user_id            TEXT,
    marketing          INTEGER NOT NULL,
    marketing_night    INTEGER NOT NULL,
    created_at         INTEGER NOT NULL,
    token_updated_at   INTEGER NOT NULL,
    PRIMARY KEY (app_id, device_id)
);
CREATE UNIQUE INDEX devices_token ON devices (app_id, token);
CREATE INDEX devices_user ON devices (app_id, user_id) WHERE user_id IS NOT NULL;

CREATE TABLE device_topics (
    app_id    TEXT NOT NULL,
    device_id TEXT NOT NULL,
    topic     TEXT NOT NULL,
    PRIMARY KEY (app_id, device_id, topic),
    FOREIGN KEY (app_id, device_id) REFERENCES devices (app_id, device_id) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE device_topics;
DROP TABLE devices;
DROP TABLE users;
DROP TABLE apps;
