package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/postgres/pgtest"
	"github.com/heraldpush/herald/sqlstore"
)

// TestLookupPlansProbeTheIndex checks, on PostgreSQL, that every lookup of
// devices the send path makes is planned as index probes, each by the
// scope and the key, when the statistics are stale: the table analyzed
// while small (empty, only another app's devices, 50 of the app's), then
// loaded with 20,000 devices of the app, as a burst of registrations does
// before a push, and when they are fresh. Both the plan made for the
// values (custom) and the one made once for any values (generic) are
// checked. The IN list (the shared dialect's form) is planned under the
// same statistics and its plan logged, for comparison: it reads all the
// app's devices in the stale cases, and scans the table in the fresh one.
//
// Two cases are logged, not checked: statistics taken when each app had
// one device (one app, or 50 apps with one each) estimate every app at one
// row, and the planner may read the app's devices and filter them. The
// first ANALYZE autovacuum makes comes after 50 changes.
func TestLookupPlansProbeTheIndex(t *testing.T) {
	base := pgtest.BaseURL(t)
	seeds := []struct {
		name, sql string
		checked   bool
	}{
		{"analyzed empty", ``, true},
		{"analyzed with 50 devices of another app", devicesSQL(`'app_01'`, 1, 50), true},
		{"analyzed with 50 devices of the app", devicesSQL(`'app_00'`, 1, 50), true},
		{"analyzed after loading", ``, true},
		{"analyzed with one device of the app", devicesSQL(`'app_00'`, 1, 1), false},
		{"analyzed with one device in each of 50 apps", devicesSQL(`'app_' || lpad((i % 50)::text, 2, '0')`, 1, 50), false},
	}
	lookups := map[string]sqlstore.Lookup{
		"DevicesByID": sqlstore.DevicesByIDLookup, "DevicesOfUsers": sqlstore.DevicesOfUsersLookup,
		"HeldTokens": sqlstore.HeldTokensLookup,
	}
	for _, seed := range seeds {
		t.Run(seed.name, func(t *testing.T) {
			db := loadedDevices(t, base, seed.sql, seed.name == "analyzed after loading")
			for name, l := range lookups {
				keys := make([]string, 500)
				for i := range keys {
					keys[i] = fmt.Sprintf("%s%05d", map[bool]string{true: "u", false: "d"}[l.Key == "user_id"], 100+i*37)
				}
				for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
					query, args := engine{}.LookupQuery(l, "app_00", keys)
					if bad := unprobed(t, db, mode, query, args, l.Table, l.Key); bad != "" && !seed.checked {
						t.Logf("%s, %s (not checked): %s", name, mode, bad)
					} else if bad != "" {
						t.Errorf("%s, %s: devices read without probing %s: %s", name, mode, l.Key, bad)
					}
					query, args = sqlstore.InListLookup(l, "app_00", keys)
					if bad := unprobed(t, db, mode, query, args, l.Table, l.Key); bad != "" {
						t.Logf("%s, %s, as an IN list: %s", name, mode, bad)
					}
				}
			}
		})
	}
}

// devicesSQL inserts devices d<n> with tokens t<n> of users u<n>, for n
// from first to last, in the app the expression of i names.
func devicesSQL(app string, first, last int) string {
	return fmt.Sprintf(`INSERT INTO devices (app_id, device_id, token, platform, app_source_version, user_id, marketing,
		marketing_night, created_at, token_updated_at)
		SELECT %s, 'd' || lpad(i::text, 5, '0'), 't' || lpad(i::text, 5, '0'), 'android', '1.0', 'u' || lpad(i::text, 5, '0'),
		TRUE, TRUE, i, i FROM generate_series(%d, %d) AS i`, app, first, last)
}

// loadedDevices returns a store in a schema of its own with 50 apps whose
// devices table was analyzed after seed ran, then loaded with 20,000
// devices of app_00 (analyzed again when fresh).
// withApps opens a migrated store in a fresh schema of base holding n
// apps (app_00, app_01, …) created at now, which it returns too.
func withApps(t *testing.T, base string, n int) (*DB, time.Time) {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, pgtest.NewSchema(t, base, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.UnixMilli(time.Now().UnixMilli()).UTC()
	for i := range n {
		a := herald.App{ID: fmt.Sprintf("app_%02d", i), Name: fmt.Sprintf("app %d", i), APIKey: herald.NewAPIKey(),
			SecretHash: herald.HashSecret("s"), Tier: herald.TierBusiness, AppUserEnabled: true, Registered: true,
			TimeZone: herald.DefaultTimeZone, CreatedAt: now}
		if err := db.CreateApp(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	return db, now
}

func loadedDevices(t *testing.T, base, seed string, fresh bool) *DB {
	t.Helper()
	ctx := context.Background()
	db, _ := withApps(t, base, 50)
	steps := []string{seed, `ANALYZE devices`, `DELETE FROM devices`, devicesSQL(`'app_00'`, 1, 20_000)}
	if fresh {
		steps = append(steps, `ANALYZE devices`)
	}
	for _, sql := range steps {
		if _, err := db.Pool.Exec(ctx, sql); sql != "" && err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	return db
}

// unprobed explains query under plan_cache_mode mode and returns what of
// its plan reads table other than by an index condition of equalities
// on app_id and key: a scan of the table, or an index scan whose condition
// leaves key to a filter. "" when every read of table probes both.
func unprobed(t *testing.T, db *DB, mode, query string, args []any, table, key string) string {
	t.Helper()
	plan := explainPlan(t, db, mode, query, args)
	var bad []string
	probed := false
	plan.walk(func(n planNode) {
		if n.Relation != table && !strings.HasPrefix(n.Type, "Bitmap Index") {
			return
		}
		switch {
		case strings.Contains(n.IndexCond, "(app_id = ") && strings.Contains(n.IndexCond, "("+key+" = "):
			probed = true
		case n.Type != "Bitmap Heap Scan":
			bad = append(bad, fmt.Sprintf("%s %s (index condition %q, filter %q)", n.Type, n.Index, n.IndexCond, n.Filter))
		}
	})
	if !probed && len(bad) == 0 {
		bad = append(bad, "no read of "+table)
	}
	return strings.Join(bad, "; ")
}

// explainPlan returns query's plan under plan_cache_mode mode.
func explainPlan(t *testing.T, db *DB, mode, query string, args []any) planNode {
	t.Helper()
	out := explain(t, db, mode, `FORMAT JSON`, rebind(query), args)
	var plans []struct{ Plan planNode }
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("explain: %v in %s", err, out)
	}
	return plans[0].Plan
}

// explain runs EXPLAIN (options) of query, in PostgreSQL's placeholders,
// under plan_cache_mode mode and returns what it printed.
func explain(t *testing.T, db *DB, mode, options, query string, args []any) []byte {
	t.Helper()
	ctx := context.Background()
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = `+mode); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, `RESET plan_cache_mode`)
	var out []byte
	if err := conn.QueryRow(ctx, `EXPLAIN (`+options+`) `+query, args...).Scan(&out); err != nil {
		t.Fatalf("explain: %v", err)
	}
	return out
}

// planNode is a node of EXPLAIN (FORMAT JSON)'s plan.
type planNode struct {
	Type      string     `json:"Node Type"`
	Relation  string     `json:"Relation Name"`
	Index     string     `json:"Index Name"`
	IndexCond string     `json:"Index Cond"`
	Filter    string     `json:"Filter"`
	Plans     []planNode `json:"Plans"`
}

func (n planNode) walk(fn func(planNode)) {
	fn(n)
	for _, c := range n.Plans {
		c.walk(fn)
	}
}

// TestTagLookupsProbeTheKey: the tag reads of an import and of a send
// with templates, and the import's lock of its users, probe each user's
// key when the statistics were taken while the tables were empty and
// 20,000 users with three tags each came since, as after a burst of
// registrations and an import's first batches. Their IN lists read the
// whole table under the generic plan then (600 ms a batch).
func TestTagLookupsProbeTheKey(t *testing.T) {
	ctx := context.Background()
	db := loadedDevices(t, pgtest.BaseURL(t), ``, false)
	for _, sql := range []string{`ANALYZE users`, `ANALYZE user_tags`,
		`INSERT INTO users (app_id, user_id, state, created_at) SELECT 'app_00', 'u' || lpad(i::text, 5, '0'), 'registered', i
			FROM generate_series(1, 20000) AS i`,
		`INSERT INTO user_tags (app_id, user_id, name, kind, text_value) SELECT 'app_00', 'u' || lpad(i::text, 5, '0'), n, 's', 'v'
			FROM generate_series(1, 20000) AS i, unnest(ARRAY['city', 'level', 'plan']) AS n`} {
		if _, err := db.Pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	keys := make([]string, 500)
	for i := range keys {
		keys[i] = fmt.Sprintf("u%05d", 100+i*37)
	}
	for name, l := range map[string]sqlstore.Lookup{"UserTags": sqlstore.UserTagsLookup,
		"UserTagNames": sqlstore.UserTagNamesLookup, "LockUsers": sqlstore.LockUsersLookup} {
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			query, args := engine{}.LookupQuery(l, "app_00", keys)
			if l.Lock != "" { // EXPLAIN of FOR UPDATE takes no lock; the plan is the same
				query = strings.Replace(query, " FOR UPDATE", "", 1)
			}
			if bad := unprobed(t, db, mode, query, args, l.Table, l.Key); bad != "" {
				t.Errorf("%s, %s: %s read without probing %s: %s", name, mode, l.Table, l.Key, bad)
			}
			if l.Lock == "" {
				query, args = sqlstore.InListLookup(l, "app_00", keys)
				if bad := unprobed(t, db, mode, query, args, l.Table, l.Key); bad != "" {
					t.Logf("%s, %s, as an IN list: %s", name, mode, bad)
				}
			}
		}
	}
}

// TestLookupPlanKept checks that a lookup of a few keys, run again and
// again on one connection as the store runs it (a prepared statement),
// is planned once: PostgreSQL keeps the generic plan after its five plans
// made for the values, which it does only when the generic one costs no
// more than those.
func TestLookupPlanKept(t *testing.T) {
	ctx := context.Background()
	db := loadedDevices(t, pgtest.BaseURL(t), ``, true)
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for name, l := range map[string]sqlstore.Lookup{"DevicesByID": sqlstore.DevicesByIDLookup,
		"DevicesOfUsers": sqlstore.DevicesOfUsersLookup, "HeldTokens": sqlstore.HeldTokensLookup} {
		query, _ := engine{}.LookupQuery(l, "", nil)
		query = rebind(query)
		for run := range 8 {
			keys := make([]string, 8)
			for i := range keys {
				keys[i] = fmt.Sprintf("%s%05d", map[bool]string{true: "u", false: "d"}[l.Key == "user_id"], 100+run*8+i)
			}
			rows, err := conn.Query(ctx, query, "app_00", keys)
			if err != nil {
				t.Fatal(err)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
		}
		var generic, custom int64
		if err := conn.QueryRow(ctx, `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1`,
			query).Scan(&generic, &custom); err != nil {
			t.Fatalf("%s: the prepared lookup: %v", name, err)
		}
		if generic == 0 {
			t.Errorf("%s: 8 runs of 8 keys made %d custom plans and %d generic, want the generic plan kept", name, custom, generic)
		}
	}
}
