package postgres

import "github.com/heraldpush/herald/sqlstore"

// UserChunksQuery finds a user's chunks by the GIN index on their users
// (migration 43), and in user_pushes those of deliveries final at the
// fan-out. The user is made a one-element array for the containment the
// index answers; each row it finds is rechecked against the array itself,
// so two users whose keys hash alike are told apart.
func (engine) UserChunksQuery(cols string) string {
	return sqlstore.UserPushesQuery(cols) + `
		UNION ALL SELECT c.push_id, c.chunk, ` + cols + ` FROM push_chunks c JOIN pushes p ON p.id = c.push_id
		WHERE ` + engine{}.ChunkHolds("c", "?2") + ` AND p.app_id = ?1`
}

// ChunkHolds is the containment UserChunksQuery probes, for one chunk.
func (engine) ChunkHolds(chunk, user string) string {
	return chunk + `.users @> jsonb_build_array(CAST(` + user + ` AS TEXT))`
}

var _ sqlstore.UserChunksWriter = engine{}
