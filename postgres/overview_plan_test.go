package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/postgres/pgtest"
	"github.com/heraldpush/herald/sqlstore"
)

// TestPushQuartersPlan: the overview chart's sums (PushQuartersSQL) read
// the window's pushes from pushes_app_created and each push's chunks,
// sent deliveries and kept counts by its id, never a whole table, with
// the statistics taken while the tables were empty and after 50,000
// pushes of 100 days in 10 apps (100,000 chunks, 25,000 delivery rows,
// 10,000 expired pushes' kept counts) were loaded, under the custom and
// the generic plan.
func TestPushQuartersPlan(t *testing.T) {
	ctx := context.Background()
	db, now := withApps(t, pgtest.BaseURL(t), 10)
	const pushes = 50_000
	step := (100 * 24 * time.Hour / pushes).Milliseconds()
	load := []string{
		`ANALYZE pushes`, `ANALYZE push_chunks`, `ANALYZE deliveries`, `ANALYZE push_counts`,
		fmt.Sprintf(`INSERT INTO pushes (id, app_id, kind, status, marketing, is_marketing_opt, requested_users, server_actions_half,
			created_at, events_received, events_opened, expired_at)
			SELECT 'p' || lpad(i::text, 6, '0'), 'app_0' || (i %% 10), 'users', 'done', FALSE, FALSE, 3, 3,
				%d::bigint + i * %d::bigint, 2, 1, CASE WHEN i <= 10000 THEN 1 END
			FROM generate_series(1, %d) AS i`, now.Add(-100*24*time.Hour).UnixMilli(), step, pushes),
		`INSERT INTO push_chunks (push_id, chunk, size, settled, sent) SELECT id, c, 500, 500, 490 FROM pushes, generate_series(0, 1) AS c`,
		`INSERT INTO deliveries (push_id, seq, recipient_idx, user_id, device_id, token, platform, app_source_version, token_updated_at, chunk, state)
			SELECT id, 0, 0, 'u', 'd', 't', 'android', '1.6.0', 0, 0, CASE WHEN id < 'p030' THEN 'sent' ELSE 'failed' END
			FROM pushes WHERE id >= 'p025' AND id < 'p050'`,
		`INSERT INTO push_counts (push_id, tokens, sent, failed, suppressed_consent, suppressed_night, unreachable, badge_unsupported, image_unsupported)
			SELECT id, 1000, 980, 20, 0, 0, 0, 0, 0 FROM pushes WHERE expired_at IS NOT NULL`,
	}
	from := now.Add(-30 * 24 * time.Hour).UnixMilli()
	args := []any{"app_00", from, now.UnixMilli()}
	check := func(stats string) {
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			var bad []string
			read := map[string]bool{}
			explainPlan(t, db, mode, sqlstore.PushQuartersSQL, args).walk(func(n planNode) {
				if n.Relation != "" {
					read[n.Relation] = true
				}
				switch {
				case strings.Contains(n.Type, "Seq Scan"):
					bad = append(bad, n.Type+" on "+n.Relation)
				case n.Index == "":
				case strings.HasPrefix(n.Index, "pushes"):
					if n.Index != "pushes_app_created" || !strings.Contains(n.IndexCond, "created_at >=") {
						bad = append(bad, fmt.Sprintf("pushes by %s (%q)", n.Index, n.IndexCond))
					}
				case !strings.Contains(n.IndexCond, "push_id = p.id"):
					bad = append(bad, fmt.Sprintf("%s by %s (%q)", n.Relation, n.Index, n.IndexCond))
				}
			})
			for _, table := range []string{"pushes", "push_chunks", "deliveries", "push_counts"} {
				if !read[table] {
					bad = append(bad, "no read of "+table)
				}
			}
			if len(bad) > 0 {
				t.Errorf("%s, %s: %s", stats, mode, strings.Join(bad, "; "))
			}
		}
	}
	for _, sql := range load {
		if _, err := db.Pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	check("analyzed empty")
	for _, sql := range []string{`ANALYZE pushes`, `ANALYZE push_chunks`, `ANALYZE deliveries`, `ANALYZE push_counts`} {
		if _, err := db.Pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	check("analyzed after loading")
}
