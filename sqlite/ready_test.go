package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/sqlite"
)

// openMigrated opens a migrated database in a fresh directory.
func openMigrated(t *testing.T) (*sqlite.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "herald.db")
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db, path
}

// waitReady polls Ready (cached for a second) until its reason is want
// ("" for ready) or the deadline passes.
func waitReady(t *testing.T, db *sqlite.DB, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := db.Ready(context.Background())
		got := ""
		if err != nil {
			var u *sqlite.Unready
			if !errors.As(err, &u) {
				t.Fatalf("Ready: got %T %v, want *sqlite.Unready", err, err)
			}
			got = u.Reason()
		}
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Ready: got reason %q (%v), want %q", got, err, want)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not a wait for work
	}
}

func TestReady(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		db, _ := openMigrated(t)
		if err := db.Ready(context.Background()); err != nil {
			t.Fatalf("got %v, want nil", err)
		}
		var n int
		if err := db.Reader.QueryRow(`SELECT count(*) FROM meta WHERE name = 'heartbeat'`).Scan(&n); err != nil || n != 1 {
			t.Errorf("heartbeat rows: got (%d, %v), want 1: the probe writes", n, err)
		}
	})
	t.Run("ErrMigrationsPending", func(t *testing.T) {
		t.Parallel()
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "herald.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		waitReady(t, db, "database migrations are not current")
	})
	t.Run("ErrReadOnly", func(t *testing.T) {
		t.Parallel()
		db, _ := openMigrated(t)
		waitReady(t, db, "")
		// The writer is one connection: query_only there refuses every
		// write with SQLITE_READONLY, as a read-only file would.
		mustExec(t, db.Writer, "PRAGMA query_only = 1")
		waitReady(t, db, "database cannot take writes: read-only")
		mustExec(t, db.Writer, "PRAGMA query_only = 0")
		waitReady(t, db, "")
	})
	t.Run("ErrLocked", func(t *testing.T) {
		t.Parallel()
		db, path := openMigrated(t)
		waitReady(t, db, "")
		release := holdWriteLock(t, path)
		start := time.Now()
		waitReady(t, db, "database cannot take writes: database is locked")
		t.Logf("unready within %s while another connection held the write lock", time.Since(start).Round(time.Millisecond))
		release()
		waitReady(t, db, "")
		// The writer's own busy timeout is back after the probe's.
		var ms int
		if err := db.Writer.QueryRow("PRAGMA busy_timeout").Scan(&ms); err != nil || ms != 1500 {
			t.Errorf("writer busy_timeout: got (%d, %v), want 1500", ms, err)
		}
	})
	t.Run("ErrDiskFull", func(t *testing.T) {
		t.Parallel()
		db, _ := openMigrated(t)
		waitReady(t, db, "")
		db.SetMinFreeBytes(math.MaxUint64) // no file system has that much room
		waitReady(t, db, "database cannot take writes: disk full")
		db.SetMinFreeBytes(0)
		waitReady(t, db, "")
	})
}

// holdWriteLock takes the database's write lock from another connection
// and returns the function that lets it go.
func holdWriteLock(t *testing.T, path string) (release func()) {
	t.Helper()
	other, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := other.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`UPDATE meta SET updated_at = 0`); err != nil {
		t.Fatal(err)
	}
	return func() {
		tx.Rollback()
		other.Close()
	}
}

func mustExec(t *testing.T, db *sql.DB, query string) {
	t.Helper()
	if _, err := db.Exec(query); err != nil && !strings.Contains(query, "PRAGMA") {
		t.Fatal(err)
	} else if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}
