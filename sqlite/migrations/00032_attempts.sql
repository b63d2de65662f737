-- +goose Up
-- Attempts at a credential (herald.AttemptStore): one row per key (an
-- address or a typed email) and its current window, counted by an upsert
-- that decides the attempt in the statement that counts it. free is how
-- many attempts of the window the requests' own records cover; the rest
-- are aggregated into one record when the window has ended.
CREATE TABLE attempts (
    key        TEXT PRIMARY KEY,
    started_at INTEGER NOT NULL,
    attempts   INTEGER NOT NULL,
    free       INTEGER NOT NULL
);
CREATE INDEX attempts_started ON attempts (started_at);

-- Ended windows whose refused attempts wait for their aggregated access
-- record (AccessStore.RecordAttempts).
CREATE TABLE attempt_windows (
    key        TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    count      INTEGER NOT NULL,
    PRIMARY KEY (key, started_at)
);

-- TOTP steps used, one row per operator and step: the primary key spends a
-- code once on every node (RFC 6238, 5.2).
CREATE TABLE totp_steps (
    operator_id TEXT NOT NULL,
    step        INTEGER NOT NULL,
    used_at     INTEGER NOT NULL,
    PRIMARY KEY (operator_id, step)
);

DROP TABLE sign_in_failures;

-- Intents (DESIGN 11): a request that may change something is written
-- here, durable, before its handler acts; the access record of its answer
-- deletes it in the transaction that appends it. One left behind (the
-- record could not be written, or the node died) is appended to the chain
-- as a record of unknown outcome (status 0) by AccessStore.RecordPending.
-- record is the record's JSON as the API writes it, seq and hashes aside.
CREATE TABLE access_intents (
    id     TEXT PRIMARY KEY,
    at     INTEGER NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX access_intents_at ON access_intents (at);

-- Access records: the count of an aggregated record, and the hmac that
-- signs each record's hash under a key derived from the master key.
ALTER TABLE access_records ADD COLUMN count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE access_records ADD COLUMN hmac TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE access_records DROP COLUMN hmac;
ALTER TABLE access_records DROP COLUMN count;
CREATE TABLE sign_in_failures (
    key TEXT NOT NULL,
    at  INTEGER NOT NULL
);
CREATE INDEX sign_in_failures_key ON sign_in_failures (key, at);
CREATE INDEX sign_in_failures_at ON sign_in_failures (at);
DROP TABLE access_intents;
DROP TABLE totp_steps;
DROP TABLE attempt_windows;
DROP TABLE attempts;
