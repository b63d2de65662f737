-- +goose Up
-- A push's requested users are stored with it as one value (encoded by
-- sqlstore), not a row each in push_recipients: accepting a 500-user push
-- no longer writes 500 rows. NULL for pushes accepted before, whose rows
-- stay where they are.
ALTER TABLE pushes ADD COLUMN recipients BYTEA;

-- +goose Down
ALTER TABLE pushes DROP COLUMN recipients;
