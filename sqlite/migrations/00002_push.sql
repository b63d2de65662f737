-- +goose Up
CREATE TABLE pushes (
    id                  TEXT PRIMARY KEY,
    app_id              TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    kind                TEXT NOT NULL,
    request_group_id    TEXT NOT NULL DEFAULT '',
    status              TEXT NOT NULL,
    failure_reason      TEXT NOT NULL DEFAULT '',
    marketing           INTEGER NOT NULL,
    is_marketing_opt    INTEGER NOT NULL,
    title               TEXT NOT NULL DEFAULT '',
    content             TEXT NOT NULL DEFAULT '',
    link_url            TEXT NOT NULL DEFAULT '',
    image_url           TEXT NOT NULL DEFAULT '',
    badge               INTEGER NOT NULL DEFAULT 0,
    requested_users     INTEGER NOT NULL,
    server_actions_half INTEGER NOT NULL,
    scheduled_at        INTEGER,
    created_at          INTEGER NOT NULL,
    started_at          INTEGER,
    finished_at         INTEGER,
    job_id              INTEGER,
    edits               TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX pushes_app ON pushes (app_id, id);
CREATE INDEX pushes_group ON pushes (app_id, request_group_id) WHERE request_group_id <> '';
CREATE INDEX pushes_scheduled ON pushes (app_id, scheduled_at) WHERE status = 'scheduled';

CREATE TABLE push_recipients (
    push_id   TEXT NOT NULL REFERENCES pushes (id) ON DELETE CASCADE,
    idx       INTEGER NOT NULL,
    user_id   TEXT NOT NULL,
    title     TEXT,
    content   TEXT,
    link_url  TEXT,
    image_url TEXT,
    PRIMARY KEY (push_id, idx)
);

CREATE TABLE deliveries (
    push_id            TEXT NOT NULL REFERENCES pushes (id) ON DELETE CASCADE,
    seq                INTEGER NOT NULL,
    recipient_idx      INTEGER NOT NULL,
    user_id            TEXT NOT NULL,
    device_id          TEXT NOT NULL,
    token              TEXT NOT NULL,
    platform           TEXT NOT NULL,
    app_source_version TEXT NOT NULL,
    token_updated_at   INTEGER NOT NULL,
    chunk              INTEGER NOT NULL,
    state              TEXT NOT NULL,
    reason             TEXT NOT NULL DEFAULT '',
    error              TEXT NOT NULL DEFAULT '',
    attempts           INTEGER NOT NULL DEFAULT 0,
    resent             INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (push_id, seq)
);
CREATE INDEX deliveries_chunk ON deliveries (push_id, chunk, state);

CREATE TABLE push_chunks (
    push_id TEXT NOT NULL REFERENCES pushes (id) ON DELETE CASCADE,
    chunk   INTEGER NOT NULL,
    done    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (push_id, chunk)
);

CREATE TABLE unreachable (
    push_id TEXT NOT NULL REFERENCES pushes (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    reason  TEXT NOT NULL,
    PRIMARY KEY (push_id, user_id)
);

CREATE TABLE usage (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    app_id     TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    push_id    TEXT NOT NULL,
    day        TEXT NOT NULL,
    half_units INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX usage_app_day ON usage (app_id, day);

CREATE TABLE idempotency (
    app_id       TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    key          TEXT NOT NULL,
    request_hash BLOB NOT NULL,
    push_id      TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (app_id, key)
);
CREATE INDEX idempotency_age ON idempotency (app_id, created_at);

-- +goose Down
DROP TABLE idempotency;
DROP TABLE usage;
DROP TABLE unreachable;
DROP TABLE push_chunks;
DROP TABLE deliveries;
DROP TABLE push_recipients;
DROP TABLE pushes;
