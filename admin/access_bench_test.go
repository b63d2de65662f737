package admin_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/handler"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/postgres"
	"github.com/heraldpush/herald/postgres/pgtest"
)

// unrecorded is a store that keeps no access record: the admin listener
// as it was before the records, for the benchmark's comparison.
type unrecorded struct{ handler.Store }

func (unrecorded) AppendAccessRecords(_ context.Context, recs []herald.AccessRecord) ([]herald.AccessRecord, error) {
	return recs, nil
}

// BenchmarkAdminGETRecorded measures an admin GET route (an app's detail)
// under concurrent load, with each request's access record written before
// its answer and without (the store's append a no-op): throughput
// (req/s) and the 99th percentile of the answer time (p99-ms), on SQLite
// and, with HERALD_TEST_DATABASE_URL, on PostgreSQL.
func BenchmarkAdminGETRecorded(b *testing.B) {
	engines := map[string]func(b *testing.B) handler.Store{"sqlite": benchSQLite}
	if os.Getenv(pgtest.EnvURL) != "" {
		engines["postgres"] = benchPostgres
	}
	for _, engine := range []string{"sqlite", "postgres"} {
		open, ok := engines[engine]
		if !ok {
			continue
		}
		for _, mode := range []string{"unrecorded", "recorded"} {
			b.Run(engine+"/"+mode, func(b *testing.B) {
				store := open(b)
				if mode == "unrecorded" {
					store = unrecorded{store}
				}
				benchAdminGET(b, store)
			})
		}
	}
}

func benchSQLite(b *testing.B) handler.Store { return testenv.OpenSQLite(b) }

func benchPostgres(b *testing.B) handler.Store {
	ctx := context.Background()
	db, err := postgres.Open(ctx, pgtest.NewSchema(b, pgtest.BaseURL(b), map[string]string{"pool_max_conns": "8"}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	return db
}

// benchAdminGET runs b.N GETs of an app from 32 clients at once.
func benchAdminGET(b *testing.B, store handler.Store) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	_, adminHandler := handler.New(handler.Deps{Store: store, AdminToken: testenv.AdminToken, Logger: logger})
	srv := httptest.NewServer(adminHandler)
	b.Cleanup(srv.Close)
	a := herald.App{ID: herald.NewID("app_", time.Now()), Name: "bench", APIKey: herald.NewAPIKey(),
		SecretHash: herald.HashSecret("s"), Tier: herald.TierBusiness, TimeZone: herald.DefaultTimeZone, CreatedAt: time.Now()}
	if err := store.CreateApp(context.Background(), a); err != nil {
		b.Fatal(err)
	}
	url := srv.URL + "/admin/v1/apps/" + a.ID
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var mu sync.Mutex
	var took []time.Duration
	b.SetParallelism(16)
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
	slices.Sort(took)
	b.ReportMetric(float64(len(took))/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(took[len(took)*99/100])/1e6, "p99-ms")
}
