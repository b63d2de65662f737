-- +goose Up
ALTER TABLE pushes ADD COLUMN topic TEXT COLLATE "C" NOT NULL DEFAULT '';
CREATE INDEX device_topics_topic ON device_topics (app_id, topic);

-- +goose Down
DROP INDEX device_topics_topic;
ALTER TABLE pushes DROP COLUMN topic;
