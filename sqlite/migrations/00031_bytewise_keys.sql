-- +goose Up
-- PostgreSQL's migration 31 makes the text of its later indexes compare
-- byte-wise, as SQLite's text always does: nothing to change here; the
-- number keeps the two engines' schema versions equal.

-- +goose Down
