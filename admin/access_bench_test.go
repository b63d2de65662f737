package admin_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/bench"
	"github.com/heraldpush/herald/delivery"
	"github.com/heraldpush/herald/handler"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/postgres/pgtest"
	"github.com/heraldpush/herald/server"
)

// unrecorded is a store that keeps no access record: the admin listener
// as it was before the records, for the benchmark's comparison.
type unrecorded struct{ handler.Store }

func (unrecorded) AppendAccessRecords(_ context.Context, _ access.Key, recs []access.Record) ([]access.Record, error) {
	return recs, nil
}

// BenchmarkAdminGETRecorded measures two admin GET routes under
// concurrent load, with each request's access record written before its
// answer and without (the store's append a no-op): the cheapest (an app's
// detail, "app") and two that an operator reads most (a push's detail,
// "push", and an app's push list, a page of 50 pushes, "pushes"). It reports throughput (req/s), the 99th percentile
// of the answer time (p99-ms), this process's CPU per request (cpu-us/req:
// the server and the benchmark's clients, which load the machine alike in
// both modes) and, on PostgreSQL, the CPU of the benchmark's own backends
// per request (db-cpu-us/req). Throughput moves with whatever else loads
// the machine; the CPU per request far less. On SQLite and, with
// HERALD_TEST_DATABASE_URL, on PostgreSQL.
func BenchmarkAdminGETRecorded(b *testing.B) {
	engines := map[string]func(b *testing.B) (string, func() float64){"sqlite": benchSQLite}
	if os.Getenv(pgtest.EnvURL) != "" {
		engines["postgres"] = benchPostgres
	}
	for _, engine := range []string{"sqlite", "postgres"} {
		open, ok := engines[engine]
		if !ok {
			continue
		}
		for _, route := range []string{"app", "push", "pushes"} {
			for _, mode := range []string{"unrecorded", "recorded"} {
				b.Run(engine+"/"+route+"/"+mode, func(b *testing.B) {
					dbURL, dbCPU := open(b)
					o := testenv.Options{DatabaseURL: dbURL, QuietLog: true, Overrides: server.Overrides{IdleQueue: true}}
					if mode == "unrecorded" {
						o.Overrides.HandlerStore = func(s handler.Store) handler.Store { return unrecorded{s} }
					}
					benchAdminGET(b, testenv.New(b, o), route, dbCPU)
				})
			}
		}
	}
}

// benchSQLite is the embedded store (an empty database URL: the node's
// SQLite); it has no database CPU of its own (nil: SQLite runs in this
// process).
func benchSQLite(*testing.B) (string, func() float64) { return "", nil }

// benchPostgres makes a PostgreSQL schema whose connections carry an
// application name of their own, and returns with its URL a reading of
// the CPU seconds its backends have used.
func benchPostgres(b *testing.B) (string, func() float64) {
	ctx := context.Background()
	name := "herald_bench_" + herald.NewAPIKey()[:12]
	url := pgtest.NewSchema(b, pgtest.BaseURL(b), map[string]string{"pool_max_conns": "8", "application_name": name})
	meter, err := pgx.Connect(ctx, pgtest.BaseURL(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { meter.Close(ctx) })
	return url, func() float64 {
		rows, err := meter.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = $1`, name)
		if err != nil {
			b.Fatal(err)
		}
		pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			b.Fatal(err)
		}
		var cpu float64
		for _, pid := range pids {
			if u, err := bench.ReadProcessUsage(strconv.Itoa(int(pid))); err == nil {
				cpu += u.CPUSeconds
			}
		}
		return cpu
	}
}

// benchPushes is how many pushes the app of the push routes holds: one
// page of the list.
const benchPushes = 50

// benchAdminGET runs b.N GETs of route on env's admin listener from 32
// clients at once; dbCPU, when not nil, reads the database's CPU seconds.
func benchAdminGET(b *testing.B, env *testenv.Env, route string, dbCPU func() float64) {
	ctx := context.Background()
	store, srv := env.Store, env.Admin
	now := time.Now()
	a := herald.App{ID: herald.NewID("app_", now), Name: "bench", APIKey: herald.NewAPIKey(),
		SecretHash: herald.HashSecret("s"), Tier: herald.TierBusiness, TimeZone: herald.DefaultTimeZone, CreatedAt: now}
	if err := store.CreateApp(ctx, a); err != nil {
		b.Fatal(err)
	}
	url := srv.URL + "/admin/v1/apps/" + a.ID
	if route != "app" {
		for i := range benchPushes {
			p := herald.Push{ID: herald.NewID("push_", now), AppID: a.ID, Kind: herald.KindUsers, Status: herald.StatusSending,
				Content: herald.Content{Title: "title " + strconv.Itoa(i), Content: "content"}, RequestedUsers: 2, CreatedAt: now}
			c := a.PushCharge(p, 2, now)
			p.ServerActionsHalf, p.Ledger = c.Half, c.Ledger
			rs := []herald.Recipient{{UserID: "u1"}, {UserID: "u2"}}
			if _, _, err := store.AcceptPush(ctx, p, rs, nil, delivery.FanoutArgs{PushID: p.ID}); err != nil {
				b.Fatal(err)
			}
			url = srv.URL + "/admin/v1/pushes/" + p.ID
		}
	}
	if route == "pushes" {
		url = srv.URL + "/admin/v1/apps/" + a.ID + "/pushes"
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var mu sync.Mutex
	var took []time.Duration
	b.SetParallelism(16)
	cpu0, db0 := selfCPU(b), 0.0
	if dbCPU != nil {
		db0 = dbCPU()
	}
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("Authorization", "Bearer "+testenv.AdminToken)
			t0 := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("GET: %d", resp.StatusCode)
				return
			}
			mine = append(mine, time.Since(t0))
		}
		mu.Lock()
		took = append(took, mine...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if len(took) == 0 {
		return
	}
	n := float64(len(took))
	slices.Sort(took)
	b.ReportMetric(n/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(took[len(took)*99/100])/1e6, "p99-ms")
	b.ReportMetric((selfCPU(b)-cpu0)*1e6/n, "cpu-us/req")
	if dbCPU != nil {
		b.ReportMetric((dbCPU()-db0)*1e6/n, "db-cpu-us/req")
	}
}

// selfCPU is this process's CPU seconds so far.
func selfCPU(b *testing.B) float64 {
	u, err := bench.ReadProcessUsage("self")
	if err != nil {
		b.Fatal(err)
	}
	return u.CPUSeconds
}
