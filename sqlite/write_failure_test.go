package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/heraldpush/herald"
)

// TestWriteFailure names real driver failures: SQLITE_FULL from a database
// held to its page count, SQLITE_READONLY from a query-only connection.
func TestWriteFailure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := db.Writer.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Writer.Exec(fmt.Sprintf("PRAGMA max_page_count = %d", pages)); err != nil {
		t.Fatal(err)
	}
	_, err = db.Writer.Exec(`INSERT INTO meta (name, value, updated_at) VALUES ('big', zeroblob(1000000), 0)`)
	if got := writeFailure(err); got != "disk full" {
		t.Errorf("a write past max_page_count (%v): got %q, want disk full", err, got)
	}
	if got := (engine{}).Translate(err); !errors.Is(got, herald.ErrUnavailable) {
		t.Errorf("Translate(disk full): got %v, want ErrUnavailable (503)", got)
	}
	if _, err := db.Writer.Exec("PRAGMA query_only = 1"); err != nil {
		t.Fatal(err)
	}
	_, err = db.Writer.Exec(`INSERT INTO meta (name, value, updated_at) VALUES ('small', x'', 0)`)
	if got := writeFailure(err); got != "read-only" {
		t.Errorf("a write on a query-only connection (%v): got %q, want read-only", err, got)
	}
	if got := (engine{}).Translate(err); !errors.Is(got, herald.ErrUnavailable) {
		t.Errorf("Translate(read-only): got %v, want ErrUnavailable (503)", got)
	}
	_, err = db.Writer.Exec(`INSERT INTO no_such_table VALUES (1)`)
	if got := (engine{}).Translate(err); err == nil || errors.Is(got, herald.ErrUnavailable) {
		t.Errorf("Translate(%v): got %v, want the error as it is (500)", err, got)
	}
	if got := writeFailure(context.DeadlineExceeded); got != "the writer did not answer within 2s" {
		t.Errorf("a timeout: got %q", got)
	}
}
