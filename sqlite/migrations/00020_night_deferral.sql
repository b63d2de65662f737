-- +goose Up
-- Night deferral (options.nightPolicy "defer"): night_defer is the push's
-- policy. A deferred chunk holds the slots of a marketing push sent in the
-- night to devices without night consent: its send job runs at
-- deferred_until (ms, the next 08:00 in the app's zone); refund_half is
-- what cancelling it refunds (half units: its users who were sent nothing
-- else).
ALTER TABLE pushes ADD COLUMN night_defer INTEGER NOT NULL DEFAULT 0;
ALTER TABLE push_chunks ADD COLUMN deferred_until INTEGER;
ALTER TABLE push_chunks ADD COLUMN refund_half INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE push_chunks DROP COLUMN refund_half;
ALTER TABLE push_chunks DROP COLUMN deferred_until;
ALTER TABLE pushes DROP COLUMN night_defer;
