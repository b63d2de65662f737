-- +goose Up
-- Text that Herald's indexes hold compares byte-wise (COLLATE "C"), as
-- migration 1 said of identifiers: these columns, added later, had the
-- database's collation instead, so their order could differ from
-- SQLite's and each comparison of a key called into the locale (the
-- export index's insert, a row per user of every push, spent most of its
-- time there). A change of collation rebuilds the column's indexes, not
-- the table.
ALTER TABLE deliveries ALTER COLUMN state TYPE TEXT COLLATE "C";
ALTER TABLE nodes ALTER COLUMN id TYPE TEXT COLLATE "C";
ALTER TABLE operator_tokens ALTER COLUMN hash TYPE TEXT COLLATE "C";
ALTER TABLE operators ALTER COLUMN email_key TYPE TEXT COLLATE "C";
ALTER TABLE push_events ALTER COLUMN push_id TYPE TEXT COLLATE "C",
    ALTER COLUMN device_id TYPE TEXT COLLATE "C", ALTER COLUMN type TYPE TEXT COLLATE "C";
ALTER TABLE push_pending_events ALTER COLUMN push_id TYPE TEXT COLLATE "C",
    ALTER COLUMN device_id TYPE TEXT COLLATE "C", ALTER COLUMN type TYPE TEXT COLLATE "C";
ALTER TABLE reconfirmation_recorded ALTER COLUMN push_id TYPE TEXT COLLATE "C";
ALTER TABLE reconfirmation_runs ALTER COLUMN app_id TYPE TEXT COLLATE "C",
    ALTER COLUMN day TYPE TEXT COLLATE "C";
ALTER TABLE user_pushes ALTER COLUMN app_id TYPE TEXT COLLATE "C",
    ALTER COLUMN user_id TYPE TEXT COLLATE "C", ALTER COLUMN push_id TYPE TEXT COLLATE "C";

-- +goose Down
ALTER TABLE user_pushes ALTER COLUMN app_id TYPE TEXT COLLATE "default",
    ALTER COLUMN user_id TYPE TEXT COLLATE "default", ALTER COLUMN push_id TYPE TEXT COLLATE "default";
ALTER TABLE reconfirmation_runs ALTER COLUMN app_id TYPE TEXT COLLATE "default",
    ALTER COLUMN day TYPE TEXT COLLATE "default";
ALTER TABLE reconfirmation_recorded ALTER COLUMN push_id TYPE TEXT COLLATE "default";
ALTER TABLE push_pending_events ALTER COLUMN push_id TYPE TEXT COLLATE "default",
    ALTER COLUMN device_id TYPE TEXT COLLATE "default", ALTER COLUMN type TYPE TEXT COLLATE "default";
ALTER TABLE push_events ALTER COLUMN push_id TYPE TEXT COLLATE "default",
    ALTER COLUMN device_id TYPE TEXT COLLATE "default", ALTER COLUMN type TYPE TEXT COLLATE "default";
ALTER TABLE operators ALTER COLUMN email_key TYPE TEXT COLLATE "default";
ALTER TABLE operator_tokens ALTER COLUMN hash TYPE TEXT COLLATE "default";
ALTER TABLE nodes ALTER COLUMN id TYPE TEXT COLLATE "default";
ALTER TABLE deliveries ALTER COLUMN state TYPE TEXT COLLATE "default";
