package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/postgres/pgtest"
	"github.com/heraldpush/herald/sendstore"
	"github.com/heraldpush/herald/sqlstore"
	"github.com/heraldpush/herald/storetest"
)

// TestFilterPlansProbeTheKey: with statistics taken while the tables were
// empty and 20,000 users, devices and three tags each loaded since (as
// right after registrations and a tag import), the fan-out's page of a
// segment push reads each tag leaf by the user's key (or, driven by one
// tag value, from that value's index), and an audience count reads
// user_tags by the key or by a tag's value from its index.
// With the tag look-ups free to become joins, and the value indexes
// matching them, the page read every tag of a leaf's name for each device
// (58 to 77 s for a page of 2,000).
func TestFilterPlansProbeTheKey(t *testing.T) {
	ctx := context.Background()
	db := loadedDevices(t, pgtest.BaseURL(t), ``, false)
	for _, sql := range []string{`ANALYZE users`, `ANALYZE user_tags`,
		`INSERT INTO users (app_id, user_id, state, created_at) SELECT 'app_00', 'u' || lpad(i::text, 5, '0'), 'registered', i
			FROM generate_series(1, 20000) AS i`,
		`INSERT INTO user_tags (app_id, user_id, name, kind, text_value, num_value)
			SELECT 'app_00', 'u' || lpad(i::text, 5, '0'), n, CASE n WHEN 'level' THEN 'n' ELSE 's' END,
				CASE n WHEN 'level' THEN '3' WHEN 'city' THEN 'Seoul-1' ELSE 'gold' END, CASE n WHEN 'level' THEN 3 END
			FROM generate_series(1, 20000) AS i, unnest(ARRAY['city', 'level', 'plan']) AS n`} {
		if _, err := db.Pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	for name, raw := range storetest.PlanFilters {
		f, errs := audience.Parse([]byte(raw))
		if errs != nil {
			t.Fatalf("%s: %v", name, errs)
		}
		page, pageArgs, err := sqlstore.DevicePageQuery("app_00", sendstore.Selection{Filter: &f, Now: time.Now()},
			sendstore.DeviceCursor{Mapped: true, UserID: "u00100", DeviceID: "d00100"}, 2000)
		if err != nil {
			t.Fatal(err)
		}
		count, countArgs, tagDriven, err := sqlstore.AudienceCountQuery("app_00", f, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		// A filter driven by one tag value reads its pages by the value.
		pageByValue := tagDriven && strings.Contains(raw, `"eq"`) && !strings.Contains(raw, `"or"`)
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			for _, q := range []struct {
				what, query string
				args        []any
				byValue     bool
			}{{"page", page, pageArgs, pageByValue}, {"count", count, countArgs, true}} {
				plan := explainPlan(t, db, mode, q.query, q.args)
				plan.walk(func(n planNode) {
					if n.Relation != "user_tags" {
						return
					}
					byKey := n.Index == "user_tags_pkey" && strings.Contains(n.IndexCond, "(user_id = d.user_id)")
					value := q.byValue && strings.HasPrefix(n.Index, "user_tags_") && strings.Contains(n.IndexCond, `(name || ''::text)`)
					if !byKey && !value {
						t.Errorf("%s, %s, %s: user_tags read by %s %s (index condition %q, filter %q)",
							name, q.what, mode, n.Type, n.Index, n.IndexCond, n.Filter)
					}
				})
			}
		}
	}
}
