package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/postgres/pgtest"
)

// TestConnectionsTerminated: after the database ends every connection of
// the pool (pg_terminate_backend, as a failover or an operator does), the
// next read, write transaction and multi-row query each succeed: a
// statement on a connection that broke before anything was written is
// run again once on a fresh one, instead of answering the caller an error.
func TestConnectionsTerminated(t *testing.T) {
	name := fmt.Sprintf("herald-terminated-%d", time.Now().UnixNano())
	url := pgtest.WithParams(t, newSchema(t, databaseURL(t)), map[string]string{"application_name": name})
	db := open(t, url)
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	admin := open(t, databaseURL(t))

	// Every connection of the pool used within the last second, so that
	// the pool does not ping them before handing them out.
	warm := func() {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if _, err := db.Pool.Exec(ctx, `SELECT pg_sleep(0.05)`); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	terminate := func() {
		t.Helper()
		var n int
		if err := admin.Pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, name).Scan(&n); err != nil || n == 0 {
			t.Fatalf("terminate: got %d connections ended, %v; want some", n, err)
		}
	}
	a := herald.App{ID: herald.NewID("app_", time.Now()), Name: "conn", APIKey: herald.NewAPIKey(), SecretHash: herald.HashSecret("x"),
		Tier: herald.TierFree, Registered: true, TimeZone: "Asia/Seoul", CreatedAt: time.Now(), SendRatePerMinute: 600000}

	warm()
	terminate()
	if err := db.CreateApp(ctx, a); err != nil {
		t.Fatalf("write transaction after the connections ended: %v", err)
	}
	warm()
	terminate()
	if got, err := db.App(ctx, a.ID); err != nil || got.Name != "conn" {
		t.Fatalf("read after the connections ended: got %v, %v; want the app", got.Name, err)
	}
	warm()
	terminate()
	if apps, err := db.ListApps(ctx); err != nil || len(apps) != 1 {
		t.Fatalf("query after the connections ended: got %d apps, %v; want 1", len(apps), err)
	}
	warm()
	terminate()
	if _, err := db.App(ctx, "app_missing"); !errors.Is(err, herald.ErrNotFound) {
		t.Fatalf("read of a missing app after the connections ended: got %v, want ErrNotFound", err)
	}
}
