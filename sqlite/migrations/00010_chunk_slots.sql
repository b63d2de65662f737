-- +goose Up
-- A chunk's deliveries are kept compactly: slots holds its deliveries left
-- to send at the fan-out (encoded by sqlstore, in order), size how many.
-- settled is the cursor: every slot before it has an outcome, sent unless
-- a row of deliveries (slot = 1) says otherwise; rows are written only for
-- outcomes other than sent. The slots from settled up to marked were
-- marked in flight: after a crash they are sent again and recorded as
-- resent. failed: the push failed, and the slots from settled on with it.
-- sent_old_badge and sent_old_image count the slots settled as sent whose
-- app version was too old for the badge or the image.
ALTER TABLE push_chunks ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
ALTER TABLE push_chunks ADD COLUMN settled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE push_chunks ADD COLUMN marked INTEGER NOT NULL DEFAULT 0;
ALTER TABLE push_chunks ADD COLUMN failed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE push_chunks ADD COLUMN sent_old_badge INTEGER NOT NULL DEFAULT 0;
ALTER TABLE push_chunks ADD COLUMN sent_old_image INTEGER NOT NULL DEFAULT 0;
ALTER TABLE push_chunks ADD COLUMN slots BLOB;
-- slot: the row is the outcome of one of its chunk's slots (behind the
-- cursor), not a delivery of its own.
ALTER TABLE deliveries ADD COLUMN slot INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE deliveries DROP COLUMN slot;
ALTER TABLE push_chunks DROP COLUMN slots;
ALTER TABLE push_chunks DROP COLUMN sent_old_image;
ALTER TABLE push_chunks DROP COLUMN sent_old_badge;
ALTER TABLE push_chunks DROP COLUMN failed;
ALTER TABLE push_chunks DROP COLUMN marked;
ALTER TABLE push_chunks DROP COLUMN settled;
ALTER TABLE push_chunks DROP COLUMN size;
