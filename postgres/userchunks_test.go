package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/heraldpush/herald/postgres/pgtest"
)

// TestUserChunksProbeTheIndex: a user's export finds the user's chunks by
// the GIN index on their users (migration 43), not by reading every
// chunk: 100 pushes of 200 chunks of 50 users each, vacuumed (the index's
// pending list merged into its tree, as autovacuum does) and analyzed,
// and the export's query, under either plan, reads push_chunks through
// push_chunks_users alone.
func TestUserChunksProbeTheIndex(t *testing.T) {
	db := loadedDevices(t, pgtest.BaseURL(t), ``, false)
	ctx := context.Background()
	for _, sql := range []string{
		`INSERT INTO pushes (id, app_id, kind, status, marketing, is_marketing_opt, requested_users, server_actions_half, created_at)
			SELECT 'push_' || lpad(i::text, 4, '0'), 'app_00', 'users', 'sent', FALSE, FALSE, 1000, 0, i FROM generate_series(1, 100) AS i`,
		`INSERT INTO push_chunks (push_id, chunk, size, slots, users)
			SELECT 'push_' || lpad(p::text, 4, '0'), c, 50, '\x00'::bytea,
				(SELECT jsonb_agg('u' || (c * 50 + k)) FROM generate_series(1, 50) AS k)
			FROM generate_series(1, 100) AS p, generate_series(0, 199) AS c`,
		`ANALYZE pushes`, `VACUUM ANALYZE push_chunks`, `ANALYZE user_pushes`} {
		if _, err := db.Pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	query := engine{}.UserChunksQuery(`p.title`)
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		plan := explainPlan(t, db, mode, query, []any{"app_00", "u77"})
		var indexed bool
		plan.walk(func(n planNode) {
			if n.Relation == "push_chunks" && n.Type != "Bitmap Heap Scan" {
				t.Errorf("%s: push_chunks read by a %s", mode, n.Type)
			}
			indexed = indexed || (n.Index == "push_chunks_users" && strings.Contains(n.IndexCond, "@>"))
		})
		if !indexed {
			t.Errorf("%s: push_chunks_users not probed: %+v", mode, plan)
		}
	}
}
