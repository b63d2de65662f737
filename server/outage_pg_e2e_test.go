package server_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"

	"github.com/jackc/pgx/v5"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/postgres/pgtest"
)

// TestOutagePostgres takes PostgreSQL away from a running herald through
// a proxy: frozen, a push answers 503 with Retry-After when its deadline
// passes (under 10 s) instead of hanging; stopped, at once; back, 200,
// the retried push (same Idempotency-Key) sent once. Each outage is
// logged once when it starts and once when it ends.
func TestOutagePostgres(t *testing.T) {
	base := pgtest.BaseURL(t)
	u, err := url.Parse(pgtest.NewSchema(t, base, map[string]string{"pool_max_conns": "8"}))
	if err != nil {
		t.Fatal(err)
	}
	p := testenv.StartProxy(t, u.Host)
	u.Host = p.Addr()
	e := start(t, testenv.Options{DatabaseURL: u.String()})
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1")
	if resp, _ := e.outagePush(a, "before"); resp.Status != http.StatusOK {
		t.Fatalf("push before: got %d %s", resp.Status, resp.Body)
	}

	p.Freeze()
	resp, took := e.outagePush(a, "frozen")
	t.Logf("frozen: push answered %d in %s", resp.Status, took.Round(time.Millisecond))
	checkUnavailable(t, "push with the database frozen", resp)
	// An SDK registration, which shares a commit with those queued beside
	// it (group commit), gives up at the request's deadline too.
	start := time.Now()
	_, err = a.Client.RegisterPushToken(context.Background(), client.RegisterRequest{
		DeviceID: "dev-frozen", Token: "tok-frozen", Platform: "android", AppSourceVersion: "1.6.0", UserID: "u2",
	})
	t.Logf("frozen: registration answered %v in %s", err, time.Since(start).Round(time.Millisecond))
	if ce := (*client.Error)(nil); !errors.As(err, &ce) || ce.StatusCode != http.StatusServiceUnavailable || ce.Code != "ERR-AB-SYS-01" {
		t.Fatalf("registration with the database frozen: got %v, want 503 ERR-AB-SYS-01", err)
	}
	e.waitReadyz(t, http.StatusServiceUnavailable, "database unreachable")
	e.waitHeld()
	p.Restore()
	e.waitReadyz(t, http.StatusOK, "")
	e.waitLines(outageEnd, 1)
	resp, took = e.outagePush(a, "frozen")
	t.Logf("thawed: push answered %d in %s", resp.Status, took.Round(time.Millisecond))
	if resp.Status != http.StatusOK {
		t.Fatalf("push after the freeze: got %d %s, want 200", resp.Status, resp.Body)
	}

	p.Stop()
	resp, took = e.outagePush(a, "stopped")
	t.Logf("stopped: push answered %d in %s", resp.Status, took.Round(time.Millisecond))
	checkUnavailable(t, "push with the database stopped", resp)
	e.waitReadyz(t, http.StatusServiceUnavailable, "database unreachable")
	e.waitHeld()
	p.Restore()
	e.waitReadyz(t, http.StatusOK, "")
	resp, took = e.outagePush(a, "stopped")
	t.Logf("back: push answered %d in %s", resp.Status, took.Round(time.Millisecond))
	if resp.Status != http.StatusOK {
		t.Fatalf("push after the stop: got %d %s, want 200", resp.Status, resp.Body)
	}

	e.checkOutageLog(2)
	// One push per Idempotency-Key: the two answered 503 were stored by
	// their retries only, and each sent at most once.
	if got := len(e.PushList(a)); got != 3 {
		t.Errorf("app has %d pushes, want 3 (before, frozen, stopped)", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(e.Received("tok-u1")) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polling interval, not a wait for work
	}
	if got := len(e.Received("tok-u1")); got > 3 {
		t.Errorf("device received %d pushes, want at most 3", got)
	} else if got < 3 {
		// A job fetch whose answer was lost with its connection leaves the
		// job running until River's rescuer frees it (delivery.RescueAfter).
		t.Logf("device received %d of 3 pushes within 10 s; jobs:%s", got, e.jobStates())
	}
}

// jobStates lists River's jobs, one a line.
func (e *env) jobStates() string {
	rows, err := e.Node.DB.JobsDB().Query(`SELECT id, kind, state, attempt FROM river_job ORDER BY id`)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, attempt int
		var kind, state string
		if err := rows.Scan(&id, &kind, &state, &attempt); err != nil {
			return err.Error()
		}
		fmt.Fprintf(&b, "\n\t%d %s %s (attempt %d)", id, kind, state, attempt)
	}
	if err := rows.Err(); err != nil {
		return err.Error()
	}
	return b.String()
}

// TestOutagePostgresReadOnly makes a database of the test's own read-only
// (default_transaction_read_only, its sessions terminated so new ones take
// it, as after a fail-over to a standby): a push answers 503, /readyz 503
// "read-only"; once writable again, 200. The database is created for the
// test (the role needs CREATEDB), so no other test's sessions are touched.
func TestOutagePostgresReadOnly(t *testing.T) {
	base := pgtest.BaseURL(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(ctx) })
	suffix := make([]byte, 6)
	rand.Read(suffix)
	db := pgx.Identifier{"herald_ro_" + hex.EncodeToString(suffix)}.Sanitize()
	if _, err := admin.Exec(ctx, `CREATE DATABASE `+db); err != nil {
		t.Skipf("cannot create a database to make read-only (%v): the role needs CREATEDB", err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(ctx, `DROP DATABASE `+db+` WITH (FORCE)`); err != nil {
			t.Errorf("drop database %s: %v", db, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + strings.Trim(db, `"`)
	e := start(t, testenv.Options{DatabaseURL: u.String()})
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1")
	setReadOnly := func(on bool) {
		t.Helper()
		stmt := `ALTER DATABASE ` + db + ` RESET default_transaction_read_only`
		if on {
			stmt = `ALTER DATABASE ` + db + ` SET default_transaction_read_only = on`
		}
		if _, err := admin.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, strings.Trim(db, `"`)); err != nil {
			t.Fatal(err)
		}
	}

	setReadOnly(true)
	e.waitReadyz(t, http.StatusServiceUnavailable, "database cannot take writes: read-only")
	resp, took := e.outagePush(a, "ro")
	t.Logf("read-only: push answered %d in %s", resp.Status, took.Round(time.Millisecond))
	checkUnavailable(t, "push on a read-only database", resp)

	setReadOnly(false)
	e.waitReadyz(t, http.StatusOK, "")
	testenv.WaitFor(t, "a push accepted", 20*time.Second, func() bool {
		resp, _ = e.outagePush(a, "ro")
		return resp.Status == http.StatusOK
	})
	testenv.WaitFor(t, "the push delivered", 20*time.Second, func() bool { return len(e.Received("tok-u1")) == 1 })
	e.waitLines(outageEnd, 1)
	if starts, ends := e.countLines(outageStart), e.countLines(outageEnd); starts != ends {
		t.Errorf("log: %d outage starts, %d ends", starts, ends)
	}
	if got := e.countLines(`msg="producer: Error fetching jobs"`); got != 0 {
		t.Errorf("log: %d lines of River's failed polls, want none", got)
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("log:\n%s", e.Log.String())
	}
}
