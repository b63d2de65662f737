-- +goose Up
-- Whether the device's app version was too old for the badge (below 1.5.0)
-- or the image (below 1.6.0) this delivery carried: sent anyway, counted.
ALTER TABLE deliveries ADD COLUMN old_for_badge BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE deliveries ADD COLUMN old_for_image BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE deliveries DROP COLUMN old_for_image;
ALTER TABLE deliveries DROP COLUMN old_for_badge;
