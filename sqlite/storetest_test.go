package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"github.com/heraldpush/herald/sqlite"
	"github.com/heraldpush/herald/sqlite/sqlitetest"
	"github.com/heraldpush/herald/storetest"
)

// TestStore runs the conformance suite against the SQLite store.
func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, openHarness)
}

// openHarness opens a migrated database in t's temporary directory, with a
// settable clock and an insert-only River client (no workers run, so every
// job the store inserts stays in river_job to be counted).
func openHarness(t *testing.T) storetest.Harness {
	t.Helper()
	db := sqlitetest.OpenMigrated(t, filepath.Join(t.TempDir(), "herald.db"))
	q, err := river.NewClient(riversqlite.New(db.Writer), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	db.Queue = q
	clock := &storetest.Clock{}
	db.Now = clock.Now
	return storetest.Harness{
		Store:  db,
		SetNow: clock.Set,
		Jobs: func(ctx context.Context, kind string) ([]string, error) {
			return jobStates(ctx, db, kind)
		},
		Exec: func(ctx context.Context, query string) error {
			_, err := db.Writer.ExecContext(ctx, query)
			return err
		},
		Together: sqlite.Together(t, db),
	}
}

// jobStates returns the states of River's jobs of kind, oldest first.
func jobStates(ctx context.Context, db *sqlite.DB, kind string) ([]string, error) {
	rows, err := db.Reader.QueryContext(ctx, `SELECT state FROM river_job WHERE kind = ? ORDER BY id`, kind)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var states []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		states = append(states, s)
	}
	return states, rows.Err()
}
