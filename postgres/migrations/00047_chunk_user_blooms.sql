-- +goose Up
-- A chunk's users are found by a Bloom filter of them, a row per chunk
-- written once with it (postgres/userchunks.go), instead of the GIN index
-- of migration 43: its entry per user and chunk, and its page splits,
-- were about 220 of a delivery's 280 bytes of WAL. A user's export reads
-- the filters of the app's chunks and rechecks each chunk one passes
-- against its users column. The filter goes with its chunk (retention,
-- DeleteApp's cascade through pushes).
CREATE TABLE chunk_user_blooms (
    push_id TEXT COLLATE "C" NOT NULL,
    chunk   INTEGER NOT NULL,
    bloom   BYTEA NOT NULL,
    PRIMARY KEY (push_id, chunk),
    FOREIGN KEY (push_id, chunk) REFERENCES push_chunks (push_id, chunk) ON DELETE CASCADE
);

-- The chunks kept so far get their filter as userBloom builds it: eight
-- bits per user, the big-endian words of the SHA-256 of its ID modulo the
-- filter's bits (12 a user, whole bytes, at least 8 bytes).
-- +goose StatementBegin
CREATE FUNCTION pg_temp.user_bloom(users JSONB) RETURNS BYTEA LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    bits INTEGER := 8 * greatest(8, (12 * jsonb_array_length(users) + 7) / 8);
    b    BYTEA := decode(repeat('00', bits / 8), 'hex');
    u    TEXT;
    h    BYTEA;
BEGIN
    FOR u IN SELECT jsonb_array_elements_text(users) LOOP
        h := sha256(convert_to(u, 'UTF8'));
        FOR i IN 0..7 LOOP
            b := set_bit(b, CAST(((get_byte(h, 4*i)::bigint << 24) | (get_byte(h, 4*i+1) << 16)
                | (get_byte(h, 4*i+2) << 8) | get_byte(h, 4*i+3)) % bits AS INTEGER), 1);
        END LOOP;
    END LOOP;
    RETURN b;
END $$;
-- +goose StatementEnd
INSERT INTO chunk_user_blooms (push_id, chunk, bloom)
    SELECT push_id, chunk, pg_temp.user_bloom(users) FROM push_chunks WHERE users IS NOT NULL;
DROP FUNCTION pg_temp.user_bloom(JSONB);
DROP INDEX push_chunks_users;
-- A chunk's settle log gains an entry at every window of its sends. Past
-- the 128 bytes of toast_tuple_target (migration 43) it went out of line,
-- and each window then wrote the whole log again as a new TOAST value
-- (and deleted the old one). Kept in the row (MAIN: out of line only if
-- the row would not fit a page otherwise), the window's update stays HOT
-- and writes what changed.
ALTER TABLE push_chunks ALTER COLUMN settle_log SET STORAGE MAIN;
-- A chunk's slots hold a token each, and FCM's are random: pglz gives up
-- on a value whose first kilobyte repeats nothing, so slots were stored
-- raw. lz4 finds the rest's repeats (platform, version, locale, the IDs'
-- prefixes): with 163-character tokens 225 → 180 bytes a delivery. A
-- server built without lz4 keeps pglz.
-- +goose StatementBegin
DO $$
BEGIN
    ALTER TABLE push_chunks ALTER COLUMN slots SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    NULL;
END $$;
-- +goose StatementEnd

-- +goose Down
ALTER TABLE push_chunks ALTER COLUMN slots SET COMPRESSION DEFAULT;
ALTER TABLE push_chunks ALTER COLUMN settle_log SET STORAGE EXTENDED;
CREATE INDEX push_chunks_users ON push_chunks USING GIN (users jsonb_path_ops);
DROP TABLE chunk_user_blooms;
