-- +goose Up
-- Access records (DESIGN 11): append-only and hash-chained. user_ids is a
-- JSON array of the users the answer showed (at most 200); each is also a
-- row of access_record_users, which the userId filter reads.
CREATE TABLE access_records (
    seq        BIGINT PRIMARY KEY,
    at         BIGINT NOT NULL,
    actor      TEXT COLLATE "C",
    email      TEXT NOT NULL,
    ip         TEXT NOT NULL,
    method     TEXT NOT NULL,
    route      TEXT NOT NULL,
    app_id     TEXT COLLATE "C" NOT NULL,
    user_ids   TEXT NOT NULL,
    user_count INTEGER NOT NULL,
    push_id    TEXT NOT NULL,
    status     INTEGER NOT NULL,
    reason     TEXT NOT NULL,
    prev_hash  TEXT NOT NULL,
    hash       TEXT NOT NULL
);
CREATE INDEX access_records_at ON access_records (at);
CREATE INDEX access_records_actor ON access_records (actor, seq);
CREATE INDEX access_records_app ON access_records (app_id, seq);

CREATE TABLE access_record_users (
    user_id TEXT COLLATE "C" NOT NULL,
    seq     BIGINT NOT NULL,
    PRIMARY KEY (user_id, seq)
);
CREATE INDEX access_record_users_seq ON access_record_users (seq);

-- The chain's one head row: the last record's seq and hash, which every
-- append locks, and the anchor, the PrevHash the first record kept holds
-- (64 zeros until the chain's start is pruned).
CREATE TABLE access_chain (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    seq    BIGINT NOT NULL,
    hash   TEXT NOT NULL,
    anchor TEXT NOT NULL
);
INSERT INTO access_chain (id, seq, hash, anchor) VALUES (1, 0,
    '0000000000000000000000000000000000000000000000000000000000000000',
    '0000000000000000000000000000000000000000000000000000000000000000');

-- +goose Down
DROP TABLE access_chain;
DROP TABLE access_record_users;
DROP TABLE access_records;
