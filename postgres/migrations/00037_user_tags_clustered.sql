-- +goose Up
-- SQLite's migration 37 keeps user_tags in the order of its key (WITHOUT
-- ROWID). PostgreSQL reads a user's tags as a range of the primary key's
-- index already; nothing changes here, and the number keeps both
-- engines' schema versions one.
SELECT 1;

-- +goose Down
SELECT 1;
