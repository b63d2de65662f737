// Package sqlitetest opens Herald's embedded store for the tests of other
// packages, as postgres/pgtest gives them schemas on PostgreSQL.
package sqlitetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"github.com/heraldpush/herald/sqlite"
)

// Open opens a migrated store in a temporary directory of t, closed when t
// ends, whose queue is a River client that only inserts: the jobs the
// store's writes make are recorded, and no worker runs them.
func Open(t testing.TB) *sqlite.DB {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "herald.db"))
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if db.Queue, err = river.NewClient(riversqlite.New(db.Writer), &river.Config{}); err != nil {
		t.Fatal(err)
	}
	return db
}
