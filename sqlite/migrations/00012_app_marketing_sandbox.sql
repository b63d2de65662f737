-- +goose Up
-- no_ad_prefix_check: the app turned off the rule that a push marked
-- options.isMarketing must have a title starting with "(광고)" (some apps
-- put the prefix in the body). sandbox: the app's pushes run the whole
-- pipeline but FCM only validates them (validate_only) and nothing is
-- charged.
ALTER TABLE apps ADD COLUMN no_ad_prefix_check INTEGER NOT NULL DEFAULT 0;
ALTER TABLE apps ADD COLUMN sandbox INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE apps DROP COLUMN sandbox;
ALTER TABLE apps DROP COLUMN no_ad_prefix_check;
