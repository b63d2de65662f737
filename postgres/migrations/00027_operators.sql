-- +goose Up
-- Named operators (DESIGN 11). email_key is the email in lower case, so
-- that two cannot differ only in case. apps is a JSON array of app IDs, or
-- NULL for every app. The password is an argon2id hash; the TOTP secrets
-- are sealed with the master key.
CREATE TABLE operators (
    id            TEXT COLLATE "C" PRIMARY KEY,
    email         TEXT NOT NULL,
    email_key     TEXT NOT NULL UNIQUE,
    name          TEXT NOT NULL,
    role          TEXT NOT NULL,
    apps          TEXT,
    disabled      BOOLEAN NOT NULL DEFAULT FALSE,
    password_hash TEXT NOT NULL DEFAULT '',
    totp          BYTEA,
    pending_totp  BYTEA,
    created_at    BIGINT NOT NULL,
    last_seen_at  BIGINT
);

-- One-use setup links: only a hash of the link's token is kept. A link
-- replaced by a newer one is marked used, so it answers as gone.
CREATE TABLE setup_links (
    token_hash  TEXT COLLATE "C" PRIMARY KEY,
    operator_id TEXT COLLATE "C" NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
    expires_at  BIGINT NOT NULL,
    used        BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX setup_links_operator ON setup_links (operator_id);

-- Operators' API tokens, by a hash of the token.
CREATE TABLE operator_tokens (
    id          TEXT COLLATE "C" PRIMARY KEY,
    operator_id TEXT COLLATE "C" NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    hash        TEXT NOT NULL UNIQUE,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX operator_tokens_operator ON operator_tokens (operator_id);

-- Sessions now belong to an operator (or to the owner's token) and end
-- 30 minutes after they were last seen or 12 hours after they began.
-- Sessions from before are dropped: everyone signs in again.
DROP TABLE sessions;
CREATE TABLE sessions (
    id            TEXT COLLATE "C" PRIMARY KEY,
    operator_id   TEXT COLLATE "C" NOT NULL,
    started_at    BIGINT NOT NULL,
    last_seen_at  BIGINT NOT NULL,
    awaiting_totp BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX sessions_operator ON sessions (operator_id);
CREATE INDEX sessions_started ON sessions (started_at);

-- Failed sign-ins, one row per key (an address or a typed email) and
-- failure, counted over a window by every node.
CREATE TABLE sign_in_failures (
    key TEXT COLLATE "C" NOT NULL,
    at  BIGINT NOT NULL
);
CREATE INDEX sign_in_failures_key ON sign_in_failures (key, at);
CREATE INDEX sign_in_failures_at ON sign_in_failures (at);

-- +goose Down
DROP TABLE sign_in_failures;
DROP TABLE sessions;
CREATE TABLE sessions (
    id         TEXT COLLATE "C" PRIMARY KEY,
    expires_at BIGINT NOT NULL
);
CREATE INDEX sessions_expires ON sessions (expires_at);
DROP TABLE operator_tokens;
DROP TABLE setup_links;
DROP TABLE operators;
