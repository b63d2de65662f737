-- +goose Up
-- The app's consent notices (DESIGN section 6): consent_notice and
-- reconfirmation hold each setting as a JSON object, '' for the default
-- (off, the default templates).
ALTER TABLE apps ADD COLUMN consent_notice TEXT NOT NULL DEFAULT '';
ALTER TABLE apps ADD COLUMN reconfirmation TEXT NOT NULL DEFAULT '';
-- reconfirmation_runs: the day (YYYY-MM-DD in the app's zone) an app's
-- daily re-confirmation run was made, claimed once across nodes with the
-- push it made (NULL when nobody was due).
CREATE TABLE reconfirmation_runs (
    app_id  TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    day     TEXT NOT NULL,
    push_id TEXT,
    PRIMARY KEY (app_id, day)
);
-- reconfirmation_recorded: the re-confirmation pushes whose reached users
-- are in the consent trail, so they are recorded once.
CREATE TABLE reconfirmation_recorded (
    push_id TEXT PRIMARY KEY
);

-- +goose Down
DROP TABLE reconfirmation_recorded;
DROP TABLE reconfirmation_runs;
ALTER TABLE apps DROP COLUMN reconfirmation;
ALTER TABLE apps DROP COLUMN consent_notice;
