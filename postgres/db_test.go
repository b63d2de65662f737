package postgres_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/postgres"
	"github.com/heraldpush/herald/sqlstore"
)

// TestMigrateTogether starts several stores on one new schema at once, as
// nodes starting together do: every Migrate succeeds and each migration is
// applied once. (Without goose's session lock three of four fail with a
// duplicate table.)
func TestMigrateTogether(t *testing.T) {
	url := newSchema(t, databaseURL(t))
	t.Parallel()
	ctx := context.Background()
	const nodes = 4
	dbs := make([]*postgres.DB, nodes)
	for i := range dbs {
		dbs[i] = open(t, url)
	}
	// Readiness first, as a load balancer would ask: it answers not
	// current, and leaves goose's version table made (goose retries
	// making it, which alone would hide a race), so the nodes below race
	// on the migrations themselves.
	var u *postgres.Unready
	if err := open(t, url).Ready(ctx); !errors.As(err, &u) {
		t.Fatalf("Ready before migrating: got %v, want *postgres.Unready", err)
	}
	errs := make(chan error, nodes)
	for _, db := range dbs {
		go func() { errs <- db.Migrate(ctx) }()
	}
	for range nodes {
		if err := <-errs; err != nil {
			t.Errorf("Migrate: %v", err)
		}
	}
	var applied, distinct, river, riverDistinct int
	err := dbs[0].Pool.QueryRow(ctx, `SELECT
		(SELECT COUNT(*) FROM goose_db_version WHERE version_id > 0),
		(SELECT COUNT(DISTINCT version_id) FROM goose_db_version WHERE version_id > 0),
		(SELECT COUNT(*) FROM river_migration),
		(SELECT COUNT(DISTINCT version) FROM river_migration)`).Scan(&applied, &distinct, &river, &riverDistinct)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join("migrations", "*.sql"))
	want := len(files) + len(sqlstore.GoMigrations(nil))
	if applied != want || distinct != want {
		t.Errorf("herald migrations: got %d applied (%d distinct), want each of %d once", applied, distinct, want)
	}
	if river == 0 || river != riverDistinct {
		t.Errorf("river migrations: got %d applied (%d distinct), want each once", river, riverDistinct)
	}
	for i, db := range dbs {
		if err := db.Ready(ctx); err != nil {
			t.Errorf("node %d: Ready: %v", i, err)
		}
	}
}

// TestReady covers each answer of the readiness probe.
func TestReady(t *testing.T) {
	base := databaseURL(t)
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		open   func(t *testing.T) *postgres.DB
		reason string
	}{
		{"OK", func(t *testing.T) *postgres.DB { return openSchema(t, base) }, ""},
		{"ErrNotMigrated", func(t *testing.T) *postgres.DB { return open(t, newSchema(t, base)) },
			"database migrations are not current"},
		{"ErrReadOnly", func(t *testing.T) *postgres.DB {
			url := newSchema(t, base)
			if err := open(t, url).Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			return open(t, withParams(t, url, map[string]string{"default_transaction_read_only": "on"}))
		}, "database cannot take writes: read-only"},
		{"ErrUnreachable", func(t *testing.T) *postgres.DB {
			db := openSchema(t, base)
			db.Pool.Close()
			return db
		}, "database unreachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.open(t).Ready(ctx)
			if tc.reason == "" {
				if err != nil {
					t.Errorf("Ready: got %v, want ready", err)
				}
				return
			}
			var u *postgres.Unready
			if !errors.As(err, &u) || u.Reason() != tc.reason {
				t.Errorf("Ready: got %T %v, want *postgres.Unready %q", err, err, tc.reason)
			}
		})
	}
}

// TestOpenNoSchema refuses a search_path naming no existing schema.
func TestOpenNoSchema(t *testing.T) {
	base := databaseURL(t)
	t.Parallel()
	_, err := postgres.Open(context.Background(), withParams(t, base, map[string]string{"search_path": "herald_no_such_schema"}))
	if err == nil {
		t.Fatal("Open: got no error, want one naming the missing schema")
	}
}

// TestTranslate sees the driver's errors become the store's: no row is
// herald.ErrNotFound, a unique violation (SQLSTATE 23505) sqlstore.ErrUnique.
func TestTranslate(t *testing.T) {
	db := openSchema(t, databaseURL(t))
	t.Parallel()
	ctx := context.Background()
	a := herald.App{ID: "app_1", Name: "a", APIKey: herald.NewAPIKey(), SecretHash: []byte("h"), Tier: herald.TierFree,
		TimeZone: herald.DefaultTimeZone}
	if err := db.CreateApp(ctx, a); err != nil {
		t.Fatal(err)
	}
	a.ID = "app_2"
	if err := db.CreateApp(ctx, a); !errors.Is(err, sqlstore.ErrUnique) {
		t.Errorf("CreateApp with a used API key: got %v, want sqlstore.ErrUnique", err)
	}
	if _, err := db.App(ctx, "app_2"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("App of a missing id: got %v, want herald.ErrNotFound", err)
	}
}
