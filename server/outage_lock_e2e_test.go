package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"
)

// TestOutageSQLiteLocked holds the database's write lock from another
// connection (another process would): a push answers 503 within
// DESIGN.md's 10 s (its deadline, plus at most SQLite's busy timeout of
// 1.5 s, which a context does not interrupt), and 200 once it is released.
func TestOutageSQLiteLocked(t *testing.T) {
	testenv.SQLiteOnly(t, "locks the embedded store's file")
	t.Parallel() // a node, a data dir and a log of its own
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1")
	unlock := e.lockFromOutside(t)
	e.waitReadyz(t, http.StatusServiceUnavailable, "database cannot take writes: database is locked",
		"database cannot take writes: the writer did not answer within 2s")
	resp, took := e.outagePush(a, "locked")
	t.Logf("locked: push answered %d in %s", resp.Status, took.Round(time.Millisecond))
	checkUnavailable(t, "push with the database locked elsewhere", resp)
	unlock()
	e.waitReadyz(t, http.StatusOK, "")
	if resp, _ := e.outagePush(a, "locked"); resp.Status != http.StatusOK {
		t.Fatalf("push once unlocked: got %d %s", resp.Status, resp.Body)
	}
	e.checkOutageLog(1)
}
