-- +goose Up
-- Audiences (DESIGN 13). What a device reports: its locale and time zone
-- ('' for none), when it was last seen (registered or reported an event),
-- and version_key, its app version as a key that sorts as versions do
-- (herald.VersionKey; '' for a version that is not x.y.z), filled for the
-- devices of before by the Go migration 36.
ALTER TABLE devices ADD COLUMN locale TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN time_zone TEXT NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN last_seen_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE devices ADD COLUMN version_key TEXT COLLATE "C" NOT NULL DEFAULT '';
UPDATE devices SET last_seen_at = token_updated_at;

-- A user's tags: kind 's' (a string, text_value), 'n' (a number:
-- num_value, and text_value as JSON writes it) or 'b' (a boolean,
-- text_value 'true' or 'false'). A filter's tag leaf looks a user's tag up
-- by the key; the two indexes let a count start from a tag's value.
CREATE TABLE user_tags (
    app_id     TEXT COLLATE "C" NOT NULL,
    user_id    TEXT COLLATE "C" NOT NULL,
    name       TEXT COLLATE "C" NOT NULL,
    kind       TEXT NOT NULL,
    text_value TEXT COLLATE "C" NOT NULL,
    num_value  DOUBLE PRECISION,
    PRIMARY KEY (app_id, user_id, name),
    FOREIGN KEY (app_id, user_id) REFERENCES users (app_id, user_id) ON DELETE CASCADE
);
CREATE INDEX user_tags_text ON user_tags (app_id, name, text_value);
CREATE INDEX user_tags_num ON user_tags (app_id, name, num_value) WHERE num_value IS NOT NULL;

-- Saved filters, by app; a name is the app's once.
CREATE TABLE segments (
    id         TEXT COLLATE "C" PRIMARY KEY,
    app_id     TEXT COLLATE "C" NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    name       TEXT COLLATE "C" NOT NULL,
    filter     TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX segments_name ON segments (app_id, name);

-- A segment push's filter (as accepted, its segment's at accept) and
-- segment; any push's localized entries (JSON), NULL for none.
ALTER TABLE pushes ADD COLUMN filter TEXT;
ALTER TABLE pushes ADD COLUMN segment_id TEXT COLLATE "C";
ALTER TABLE pushes ADD COLUMN localized TEXT;

-- +goose Down
ALTER TABLE pushes DROP COLUMN localized;
ALTER TABLE pushes DROP COLUMN segment_id;
ALTER TABLE pushes DROP COLUMN filter;
DROP TABLE segments;
DROP TABLE user_tags;
ALTER TABLE devices DROP COLUMN version_key;
ALTER TABLE devices DROP COLUMN last_seen_at;
ALTER TABLE devices DROP COLUMN time_zone;
ALTER TABLE devices DROP COLUMN locale;
