-- +goose Up
-- Whether the device's app version was too old for the badge (below 1.5.0)
-- or the image (below 1.6.0) this delivery carried: sent anyway, counted.
ALTER TABLE deliveries ADD COLUMN old_for_badge INTEGER NOT NULL DEFAULT 0;
ALTER TABLE deliveries ADD COLUMN old_for_image INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE deliveries DROP COLUMN old_for_image;
ALTER TABLE deliveries DROP COLUMN old_for_badge;
