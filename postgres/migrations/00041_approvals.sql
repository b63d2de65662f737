-- +goose Up
-- Approval before sending (DESIGN 14): an app's approval setting (mode
-- off, ads, broad or all; min users for a push to named users), and each
-- push's approval steps, a JSON array of {action, by, at, reason}, NULL
-- for a push that did not wait for approval.
ALTER TABLE apps ADD COLUMN approval_mode TEXT NOT NULL DEFAULT 'off';
ALTER TABLE apps ADD COLUMN approval_min_users INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pushes ADD COLUMN approvals TEXT;

-- +goose Down
ALTER TABLE pushes DROP COLUMN approvals;
ALTER TABLE apps DROP COLUMN approval_min_users;
ALTER TABLE apps DROP COLUMN approval_mode;
