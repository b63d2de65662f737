package server_test

import (
	"database/sql"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// readyz is the body of /readyz.
type readyz struct{ Status, Reason string }

// getReadyz asks one listener's /readyz.
func getReadyz(t *testing.T, base string) (int, readyz) {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatalf("GET %s/readyz: %v", base, err)
	}
	defer resp.Body.Close()
	var body readyz
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("GET %s/readyz: decode: %v", base, err)
	}
	return resp.StatusCode, body
}

// waitReadyz polls both listeners' /readyz until each answers status and
// one of reasons (the answer is cached for a second).
func (e *env) waitReadyz(t *testing.T, status int, reasons ...string) {
	t.Helper()
	if len(reasons) == 0 {
		reasons = []string{""}
	}
	for _, base := range []string{e.API.URL, e.Admin.URL} {
		var code int
		var body readyz
		deadline := time.Now().Add(20 * time.Second)
		for {
			code, body = getReadyz(t, base)
			if code == status && slices.Contains(reasons, body.Reason) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s/readyz: got %d %+v, want %d with a reason in %q", base, code, body, status, reasons)
			}
			time.Sleep(20 * time.Millisecond) // polling interval, not a wait for work
		}
		want := map[int]string{http.StatusOK: "ready", http.StatusServiceUnavailable: "unavailable"}[status]
		if body.Status != want {
			t.Errorf("%s/readyz status: got %q, want %q", base, body.Status, want)
		}
	}
}

// TestReadyzWhenTheDatabaseCannotWrite makes the running service's
// database refuse writes three ways (read-only, locked by another
// connection, file system full) and watches /readyz on both listeners go
// to 503 with the reason and come back to 200 on its own.
func TestReadyzWhenTheDatabaseCannotWrite(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.SQLiteOnly("makes the SQLite writer read-only or full")
	e.waitReadyz(t, http.StatusOK, "")

	t.Run("ReadOnly", func(t *testing.T) {
		// The writer is one connection; query_only there makes every
		// write fail with SQLITE_READONLY, as a read-only file does (the
		// tests run as root, where chmod does not stop writes).
		execWriter(t, e, "PRAGMA query_only = 1")
		e.waitReadyz(t, http.StatusServiceUnavailable, "database cannot take writes: read-only")
		execWriter(t, e, "PRAGMA query_only = 0")
		e.waitReadyz(t, http.StatusOK, "")
	})
	t.Run("Locked", func(t *testing.T) {
		unlock := e.lockFromOutside(t)
		// River's fetches queue on the writer behind the lock too, so the
		// probe may not even get the writer within its time.
		e.waitReadyz(t, http.StatusServiceUnavailable, "database cannot take writes: database is locked",
			"database cannot take writes: the writer did not answer within 2s")
		unlock()
		e.waitReadyz(t, http.StatusOK, "")
	})
	t.Run("DiskFull", func(t *testing.T) {
		// Real statfs of the data directory against a floor no file
		// system meets.
		e.SQLiteDB().SetMinFreeBytes(math.MaxUint64)
		e.waitReadyz(t, http.StatusServiceUnavailable, "database cannot take writes: disk full")
		e.SQLiteDB().SetMinFreeBytes(1 << 20)
		e.waitReadyz(t, http.StatusOK, "")
	})
	if !strings.Contains(e.Log.String(), "not ready") {
		t.Errorf("log: got no \"not ready\" line, want the cause logged")
	}
}

func execWriter(t *testing.T, e *env, query string) {
	t.Helper()
	if _, err := e.SQLiteDB().Writer.Exec(query); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// lockFromOutside takes the embedded store's write lock from another
// connection, as another process would, until the function it returns
// releases it (or the test ends).
func (e *env) lockFromOutside(t *testing.T) (unlock func()) {
	t.Helper()
	other, err := sql.Open("sqlite", "file:"+e.DBPath+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	tx, err := other.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`UPDATE meta SET updated_at = 0`); err != nil {
		t.Fatal(err)
	}
	return func() { tx.Rollback() }
}
