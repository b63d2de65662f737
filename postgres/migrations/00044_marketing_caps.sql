-- +goose Up
-- Frequency caps (DESIGN 14): an app's marketingCap (NULL: no cap in that
-- window), and the ledger of marketing receipts, one row per user a
-- capped marketing push was really sent to (claimed as the user's first
-- send is marked in flight, given back when none of the user's sends
-- went out), kept 8 days. Only pushes of an app with a cap write it.
-- push_counts keeps suppressed_cap of an expired push.
ALTER TABLE apps ADD COLUMN marketing_cap_per_day INTEGER;
ALTER TABLE apps ADD COLUMN marketing_cap_per_week INTEGER;
CREATE TABLE marketing_receipts (
    app_id  TEXT COLLATE "C" NOT NULL,
    user_id TEXT COLLATE "C" NOT NULL,
    push_id TEXT COLLATE "C" NOT NULL,
    at      BIGINT NOT NULL,
    PRIMARY KEY (app_id, user_id, push_id)
);
CREATE INDEX marketing_receipts_push ON marketing_receipts (push_id);
CREATE INDEX marketing_receipts_at ON marketing_receipts (at);
ALTER TABLE push_counts ADD COLUMN suppressed_cap BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE push_counts DROP COLUMN suppressed_cap;
DROP TABLE marketing_receipts;
ALTER TABLE apps DROP COLUMN marketing_cap_per_week;
ALTER TABLE apps DROP COLUMN marketing_cap_per_day;
