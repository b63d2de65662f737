// Package sqlitetest opens Herald's embedded store for the tests of other
// packages, as postgres/pgtest gives them schemas on PostgreSQL.
//
// Migrating a new database costs about 60 ms; the store's suite alone
// opens some 250. So the first store a test process opens is migrated
// once into a template, and every store after it starts as a copy of the
// template's file: the same file a migrated store has, made in a
// millisecond.
package sqlitetest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
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
	db := OpenMigrated(t, filepath.Join(t.TempDir(), "herald.db"))
	var err error
	if db.Queue, err = river.NewClient(riversqlite.New(db.Writer), &river.Config{}); err != nil {
		t.Fatal(err)
	}
	return db
}

// OpenMigrated opens the store at path, which must not exist yet, as a
// copy of the migrated template, closed when t ends. It has no queue.
func OpenMigrated(t testing.TB, path string) *sqlite.DB {
	t.Helper()
	WriteMigrated(t, path)
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// WriteMigrated writes a migrated database file at path (which must not
// exist yet), for a node or the binary to open as its store: opening it
// finds every migration applied.
func WriteMigrated(t testing.TB, path string) {
	t.Helper()
	b, err := template()
	if err != nil {
		t.Fatalf("sqlitetest: migrated template: %v", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatalf("sqlitetest: %v", err)
	}
}

// template is the file of a newly migrated database, made once a process.
var template = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "herald-sqlitetest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	path := filepath.Join(dir, "herald.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	// everything in the main file, so that it alone is the database
	if _, err := db.Writer.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
})
