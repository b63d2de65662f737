package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/heraldpush/herald/sqlite"
)

// TestReclaim: a new store is made with incremental vacuum, so the pages
// deleted rows free go back to the file system in steps; the file
// shrinks.
func TestReclaim(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "herald.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var mode int
	if err := db.Writer.QueryRow(`PRAGMA auto_vacuum`).Scan(&mode); err != nil || mode != 2 {
		t.Fatalf("auto_vacuum: got %d (%v), want 2 (incremental)", mode, err)
	}
	if _, err := db.Writer.Exec(`CREATE TABLE filler (b BLOB)`); err != nil {
		t.Fatal(err)
	}
	for range 50 {
		if _, err := db.Writer.Exec(`INSERT INTO filler VALUES (randomblob(100000))`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Writer.Exec(`DELETE FROM filler`); err != nil {
		t.Fatal(err)
	}
	pages := func() (n int64) {
		t.Helper()
		if err := db.Writer.QueryRow(`PRAGMA page_count`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := pages()
	left, err := db.Reclaim(ctx, 100)
	if err != nil {
		t.Fatalf("Reclaim: %v", err)
	}
	if left == 0 || pages() != before-100 {
		t.Fatalf("after one step of 100: %d free pages left, %d pages; want some left, %d pages", left, pages(), before-100)
	}
	for left > 0 {
		if left, err = db.Reclaim(ctx, 1000); err != nil {
			t.Fatalf("Reclaim: %v", err)
		}
	}
	if after := pages(); after > before-1000 {
		t.Errorf("pages after reclaiming all: got %d, want well under %d", after, before)
	}
}

// TestReclaimOlderStore: a store made before incremental vacuum reclaims
// nothing and says so (retention does not wait on it), until the one-time
// conversion of docs/operations.md ("PRAGMA auto_vacuum = INCREMENTAL;
// VACUUM;") makes it reclaim like a new one.
func TestReclaimOlderStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "herald.db")
	old, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(`CREATE TABLE filler (b BLOB); INSERT INTO filler VALUES (randomblob(1000000)); DELETE FROM filler`); err != nil {
		t.Fatal(err)
	}
	old.Close()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if left, err := db.Reclaim(ctx, 10); left != 0 || err != nil {
		t.Fatalf("Reclaim on a store without incremental vacuum: got (%d, %v), want (0, nil)", left, err)
	}
	var free int64
	if err := db.Writer.QueryRow(`PRAGMA freelist_count`).Scan(&free); err != nil || free == 0 {
		t.Fatalf("free pages: got %d (%v), want the deleted blob's", free, err)
	}
	if _, err := db.Writer.Exec(`PRAGMA auto_vacuum = INCREMENTAL`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Writer.Exec(`VACUUM`); err != nil {
		t.Fatal(err)
	}
	var mode int
	if err := db.Writer.QueryRow(`PRAGMA auto_vacuum`).Scan(&mode); err != nil || mode != 2 {
		t.Fatalf("auto_vacuum after the conversion: got %d (%v), want 2", mode, err)
	}
	if _, err := db.Writer.Exec(`INSERT INTO filler VALUES (randomblob(1000000)); DELETE FROM filler`); err != nil {
		t.Fatal(err)
	}
	left, err := db.Reclaim(ctx, 10)
	if err != nil || left == 0 {
		t.Fatalf("Reclaim after the conversion: got (%d, %v), want free pages left after 10", left, err)
	}
}
