-- +goose Up
-- Which pushes were sent to a user, so that a user's export (GET
-- …/users/{userId}/export) reads them by user instead of scanning chunk
-- slots: one row per user, push and chunk holding a slot (or a delivery
-- row) of the user, written with the chunk (the fan-out's pages, retry
-- chunks). Unmapped devices have none. Users a push could not reach at
-- all are found in unreachable, by its index on the user. Pushes fanned
-- out before this migration have no rows. No foreign key: its check on
-- every row would be paid on the send path; deleting an app deletes its
-- rows (DeleteApp), and user_pushes_push finds a push's.
CREATE TABLE user_pushes (
    app_id  TEXT NOT NULL,
    user_id TEXT NOT NULL,
    push_id TEXT NOT NULL,
    chunk   INTEGER NOT NULL,
    PRIMARY KEY (app_id, user_id, push_id, chunk)
) WITHOUT ROWID;
CREATE INDEX user_pushes_push ON user_pushes (push_id);
CREATE INDEX unreachable_user ON unreachable (user_id);

-- A restored store holds the pushes it would send again (status 'held',
-- DESIGN 12) until an operator releases or cancels each; held_from is the
-- status a held push returns to when released ('sending' or 'scheduled').
ALTER TABLE pushes ADD COLUMN held_from TEXT;

-- +goose Down
ALTER TABLE pushes DROP COLUMN held_from;
DROP INDEX unreachable_user;
DROP TABLE user_pushes;
