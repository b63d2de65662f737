package postgres

import (
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/heraldpush/herald/sqlstore"
)

// A chunk's users are found by a Bloom filter of them (migration 47): a
// row of chunk_user_blooms per chunk, written once with it, instead of an
// index entry per user and chunk (the GIN index of migration 43, about
// 220 of a delivery's 280 bytes of WAL). A user's export reads the
// filters of the app's chunks and rechecks the chunks they pass against
// the chunk's users column, so a false positive (about 0.3 %) costs a
// chunk read, never a wrong answer.
//
// A user's bloomHashes bit positions are the eight big-endian 32-bit words
// of the SHA-256 of its ID, each modulo the filter's bits; a filter has
// bloomBitsPerUser bits per user of its chunk, rounded up to whole bytes
// (at least 8). Bit n is bit n % 8 of byte n / 8, counted from the least
// significant, as PostgreSQL's get_bit counts them: the filter is built
// here and probed in SQL (bloomProbe), and migration 47's backfill
// builds it in SQL the same way.
const (
	bloomHashes      = 8
	bloomBitsPerUser = 12
)

// userBloom returns the Bloom filter of a chunk's distinct users.
func userBloom(users []string) []byte {
	b := make([]byte, max(8, (bloomBitsPerUser*len(users)+7)/8))
	bits := uint32(len(b) * 8)
	for _, u := range users {
		h := sha256.Sum256([]byte(u))
		for i := range bloomHashes {
			n := binary.BigEndian.Uint32(h[4*i:]) % bits
			b[n/8] |= 1 << (n % 8)
		}
	}
	return b
}

// userWords is the SQL of the array of the user's (an SQL expression)
// bloomHashes hash words, as bigints.
func userWords(user string) string {
	return `(SELECT array_agg((get_byte(h, 4*i)::bigint << 24) | (get_byte(h, 4*i+1) << 16) | (get_byte(h, 4*i+2) << 8) | get_byte(h, 4*i+3) ORDER BY i)
		FROM (SELECT sha256(convert_to(CAST(` + user + ` AS TEXT), 'UTF8')) AS h) AS hashed, generate_series(0, ` + strconv.Itoa(bloomHashes-1) + `) AS i)`
}

// bloomProbe is the condition that the filter (a chunk_user_blooms alias)
// has the bit of each of words (an array of userWords) set.
func bloomProbe(filter, words string) string {
	bits := make([]string, bloomHashes)
	for i := range bits {
		bits[i] = `get_bit(` + filter + `.bloom, CAST(` + words + `[` + strconv.Itoa(i+1) + `] % (8 * length(` + filter + `.bloom)) AS INTEGER)) = 1`
	}
	return strings.Join(bits, ` AND `)
}

// UserChunksQuery finds a user's chunks by their filters, and in
// user_pushes those of deliveries final at the fan-out. The user's hash
// words are worked out once (k); each chunk a filter passes is read by its
// key and rechecked against its users column, so a false positive is told
// apart. The recheck is a lateral subquery the planner may not flatten
// (OFFSET 0): flattened, it may join push_chunks whole and recheck every
// chunk of the app.
func (engine) UserChunksQuery(cols string) string {
	return sqlstore.UserPushesQuery(cols) + `
		UNION ALL (WITH k AS (SELECT ` + userWords("?2") + ` AS words)
		SELECT b.push_id, b.chunk, ` + cols + ` FROM k CROSS JOIN pushes p JOIN chunk_user_blooms b ON b.push_id = p.id
		CROSS JOIN LATERAL (SELECT 1 FROM push_chunks c WHERE c.push_id = b.push_id AND c.chunk = b.chunk
			AND ` + engine{}.ChunkHolds("c", "?2") + ` OFFSET 0) AS held
		WHERE p.app_id = ?1 AND ` + bloomProbe("b", "k.words") + `)`
}

// ChunkHolds is the containment a chunk's users column answers.
func (engine) ChunkHolds(chunk, user string) string {
	return chunk + `.users @> jsonb_build_array(CAST(` + user + ` AS TEXT))`
}

// ChunkUsersInsert records a chunk's filter.
func (engine) ChunkUsersInsert() string {
	return `INSERT INTO chunk_user_blooms (push_id, chunk, bloom) VALUES (?, ?, ?)`
}

// ChunkUsersArgs are a chunk's push, number and filter.
func (engine) ChunkUsersArgs(pushID string, chunk int, users []string) []any {
	return []any{pushID, chunk, userBloom(users)}
}

var _ sqlstore.UserChunksWriter = engine{}
