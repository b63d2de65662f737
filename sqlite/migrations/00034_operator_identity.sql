-- +goose Up
-- Single sign-on binds an operator to the provider's (issuer, subject) at
-- the first sign-in and requires it after (DESIGN 11); no two operators
-- hold one identity. NULLs are distinct, so unbound operators do not
-- collide.
ALTER TABLE operators ADD COLUMN oidc_issuer TEXT;
ALTER TABLE operators ADD COLUMN oidc_subject TEXT;
CREATE UNIQUE INDEX operators_oidc ON operators (oidc_issuer, oidc_subject);

-- email_key lowers ASCII letters alone now (herald.EmailKey): it was
-- lowered as Unicode lowers, which made the Kelvin sign a k. SQLite's
-- lower() lowers ASCII alone.
UPDATE operators SET email_key = lower(email);

-- +goose Down
DROP INDEX operators_oidc;
ALTER TABLE operators DROP COLUMN oidc_subject;
ALTER TABLE operators DROP COLUMN oidc_issuer;
