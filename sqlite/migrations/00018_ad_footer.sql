-- +goose Up
-- The ad footer (Network Act art. 50(4)): who sends the app's advertising,
-- how to reach them and how to refuse it, appended to the body of every
-- marketing message of an app under the (광고) rule; '' when unset.
ALTER TABLE apps ADD COLUMN ad_sender_name TEXT NOT NULL DEFAULT '';
ALTER TABLE apps ADD COLUMN ad_sender_contact TEXT NOT NULL DEFAULT '';
ALTER TABLE apps ADD COLUMN ad_opt_out TEXT NOT NULL DEFAULT '';
-- ad_footer: the footer a push's marketing messages are sent with, fixed
-- when the push was accepted ('' when none), so that a later change of the
-- app's settings does not alter a scheduled push.
ALTER TABLE pushes ADD COLUMN ad_footer TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE pushes DROP COLUMN ad_footer;
ALTER TABLE apps DROP COLUMN ad_opt_out;
ALTER TABLE apps DROP COLUMN ad_sender_contact;
ALTER TABLE apps DROP COLUMN ad_sender_name;
