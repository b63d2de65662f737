-- +goose Up
CREATE TABLE pushes (
    id                  TEXT COLLATE "C" PRIMARY KEY,
    app_id              TEXT COLLATE "C" NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    kind                TEXT NOT NULL,
    request_group_id    TEXT COLLATE "C" NOT NULL DEFAULT '',
    status              TEXT NOT NULL,
    failure_reason      TEXT NOT NULL DEFAULT '',
    marketing           BOOLEAN NOT NULL,
    is_marketing_opt    BOOLEAN NOT NULL,
    title               TEXT NOT NULL DEFAULT '',
    content             TEXT NOT NULL DEFAULT '',
    link_url            TEXT NOT NULL DEFAULT '',
    image_url           TEXT NOT NULL DEFAULT '',
    badge               BOOLEAN NOT NULL DEFAULT FALSE,
    requested_users     INTEGER NOT NULL,
    server_actions_half BIGINT NOT NULL,
    scheduled_at        BIGINT,
    created_at          BIGINT NOT NULL,
    started_at          BIGINT,
    finished_at         BIGINT,
    job_id              BIGINT,
    edits               TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX pushes_app ON pushes (app_id, id);
CREATE INDEX pushes_group ON pushes (app_id, request_group_id) WHERE request_group_id <> '';
CREATE INDEX pushes_scheduled ON pushes (app_id, scheduled_at) WHERE status = 'scheduled';

CREATE TABLE push_recipients (
    push_id   TEXT COLLATE "C" NOT NULL REFERENCES pushes (id) ON DELETE CASCADE,
    idx       INTEGER NOT NULL,
    user_id   TEXT COLLATE "C" NOT NULL,
    title     TEXT,
    content   TEXT,
    link_url  TEXT,
    image_url TEXT,
    PRIMARY KEY (push_id, idx)
);

CREATE TABLE deliveries (
    push_id            TEXT COLLATE "C" NOT NULL REFERENCES pushes (id) ON DELETE CASCADE,
    seq                INTEGER NOT NULL,
    recipient_idx      INTEGER NOT NULL,
    user_id            TEXT COLLATE "C" NOT NULL,
    device_id          TEXT COLLATE "C" NOT NULL,
    token              TEXT COLLATE "C" NOT NULL,
    platform           TEXT NOT NULL,
    app_source_version TEXT NOT NULL,
    token_updated_at   BIGINT NOT NULL,
    chunk              INTEGER NOT NULL,
    state              TEXT NOT NULL,
    reason             TEXT NOT NULL DEFAULT '',
    error              TEXT NOT NULL DEFAULT '',
    attempts           INTEGER NOT NULL DEFAULT 0,
    resent             BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (push_id, seq)
);
CREATE INDEX deliveries_chunk ON deliveries (push_id, chunk, state);

CREATE TABLE push_chunks (
    push_id TEXT COLLATE "C" NOT NULL REFERENCES pushes (id) ON DELETE CASCADE,
    chunk   INTEGER NOT NULL,
    done    BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (push_id, chunk)
);

CREATE TABLE unreachable (
    push_id TEXT COLLATE "C" NOT NULL REFERENCES pushes (id) ON DELETE CASCADE,
    user_id TEXT COLLATE "C" NOT NULL,
    reason  TEXT NOT NULL,
    PRIMARY KEY (push_id, user_id)
);

CREATE TABLE usage (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id     TEXT COLLATE "C" NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    push_id    TEXT COLLATE "C" NOT NULL,
    day        TEXT COLLATE "C" NOT NULL,
    half_units BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX usage_app_day ON usage (app_id, day);

CREATE TABLE idempotency (
    app_id       TEXT COLLATE "C" NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    key          TEXT COLLATE "C" NOT NULL,
    request_hash BYTEA NOT NULL,
    push_id      TEXT COLLATE "C" NOT NULL,
    created_at   BIGINT NOT NULL,
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
