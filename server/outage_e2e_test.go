package server_test

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"
)

// outageLines are the log lines of an outage: one when it starts, one when
// it ends.

// startIn runs Herald on the embedded store in dataDir.
func startIn(t *testing.T, dataDir string) *env {
	t.Helper()
	return start(t, testenv.Options{SQLiteDir: dataDir})
}

// outagePush sends a push to user u1 with an Idempotency-Key and returns
// the answer and how long it took.
func (e *env) outagePush(a testenv.App, key string) (testenv.Response, time.Duration) {
	e.T.Helper()
	h := a.Keys()
	h["Idempotency-Key"] = key
	began := time.Now()
	resp := testenv.Send(e.T, &http.Client{Timeout: 30 * time.Second}, e.API.URL, testenv.Request{
		Method: "POST", URL: "/api/push/v2/users", Header: h,
		Body: map[string]any{"userIds": []string{"u1"}, "title": "t", "content": "c"},
	})
	return resp, time.Since(began)
}

// checkUnavailable fails the test unless resp is DESIGN.md section 4's
// 503: ERR-AB-SYS-01 with Retry-After and the Idempotency-Key advice.
func checkUnavailable(t *testing.T, what string, resp testenv.Response) {
	t.Helper()
	var body struct {
		StatusCode    int
		Code, Message string
		Details       []struct{ Field, Reason string }
	}
	resp.Decode(t, &body)
	if resp.Status != http.StatusServiceUnavailable || body.Code != "ERR-AB-SYS-01" || body.Message != "Service temporarily unavailable." {
		t.Fatalf("%s: got %d %s, want 503 ERR-AB-SYS-01 \"Service temporarily unavailable.\"", what, resp.Status, resp.Body)
	}
	if ra := resp.Header.Get("Retry-After"); ra == "" {
		t.Errorf("%s: got no Retry-After, want one", what)
	}
	if len(body.Details) != 1 || body.Details[0].Field != "Idempotency-Key" || !strings.Contains(body.Details[0].Reason, "at most once") {
		t.Errorf("%s: details %+v, want the Idempotency-Key advice", what, body.Details)
	}
}

// waitHeld waits until the outage in progress has held back a log line
// (River's job fetch failing, typically), so the test proves they are.
func (e *env) waitHeld() {
	e.T.Helper()
	testenv.WaitFor(e.T, "a repeated error line held back", 20*time.Second, func() bool {
		down, held := e.Node.Outage()
		return down && held > 0
	})
}

// countLines counts the log lines containing msg.
func (e *env) countLines(msg string) int {
	return strings.Count(e.Log.String(), msg)
}

// waitLines waits until the log holds n lines containing msg.
func (e *env) waitLines(msg string, n int) {
	e.T.Helper()
	testenv.WaitFor(e.T, "the log line "+msg, 20*time.Second, func() bool { return e.countLines(msg) >= n })
}

// checkOutageLog fails the test unless the log holds n outages, each one
// start and one end line, and none of River's per-poll errors.
func (e *env) checkOutageLog(n int) {
	e.T.Helper()
	e.waitLines(outageEnd, n)
	if got := e.countLines(outageStart); got != n {
		e.T.Errorf("log: %d %q lines, want %d", got, outageStart, n)
	}
	if got := e.countLines(outageEnd); got != n {
		e.T.Errorf("log: %d %q lines, want %d", got, outageEnd, n)
	}
	if got := e.countLines("level=ERROR"); got != n {
		e.T.Errorf("log: %d ERROR lines, want %d (the starts; River's failed polls and the failed requests held back)", got, n)
	}
	if got := e.countLines(`msg="producer: Error fetching jobs"`); got != 0 {
		e.T.Errorf("log: %d lines of River's failed polls, want none", got)
	}
	if e.T.Failed() || testing.Verbose() {
		e.T.Logf("log:\n%s", e.Log.String())
	}
}

// mountTmpfs mounts a tmpfs of size at a new directory, or skips t saying
// why it cannot.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a %s tmpfs here (%v): mounting needs root with CAP_SYS_ADMIN", size, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fill writes a file in dir until its file system is full and returns its
// path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for range 1 << 20 { // at most 4 GiB: the tmpfs ends it long before
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", dir, err)
			}
			return path
		}
	}
	t.Fatalf("fill %s: never full", dir)
	return ""
}

// TestOutageSQLiteDiskFull runs the embedded store on a real 8 MB tmpfs
// and fills it: a push answers 503 with Retry-After, /readyz 503 "disk
// full"; once room is made both answer 200 again, the push with the same
// Idempotency-Key is sent once, and the log holds one outage.
func TestOutageSQLiteDiskFull(t *testing.T) {
	testenv.SQLiteOnly(t, "fills the embedded store's file system")
	t.Parallel() // a node, a data dir and a log of its own
	dir := mountTmpfs(t, "8m")
	e := startIn(t, dir)
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1")
	if resp, _ := e.outagePush(a, "before"); resp.Status != http.StatusOK {
		t.Fatalf("push before: got %d %s", resp.Status, resp.Body)
	}

	filler := fill(t, dir)
	resp, took := e.outagePush(a, "full")
	t.Logf("disk full: push answered %d in %s: %s", resp.Status, took.Round(time.Millisecond), resp.Body)
	checkUnavailable(t, "push on a full disk", resp)
	e.waitReadyz(t, http.StatusServiceUnavailable, "database cannot take writes: disk full")
	e.waitHeld() // River's job fetch, a write, fails on the full disk

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	e.waitReadyz(t, http.StatusOK, "")
	resp, took = e.outagePush(a, "full")
	t.Logf("room made: push answered %d in %s", resp.Status, took.Round(time.Millisecond))
	if resp.Status != http.StatusOK {
		t.Fatalf("push with room made: got %d %s, want 200", resp.Status, resp.Body)
	}
	testenv.WaitFor(t, "both pushes delivered", 20*time.Second, func() bool { return len(e.Received("tok-u1")) >= 2 })
	e.checkOutageLog(1)
	if got := len(e.Received("tok-u1")); got != 2 {
		t.Errorf("device received %d pushes, want 2 (the one refused 503 sent once, on its retry)", got)
	}
}

// TestOutageSQLiteReadOnly makes the writer refuse writes (query_only,
// SQLITE_READONLY as a read-only file gives; the tests run as root, where
// chmod does not stop writes, and a tmpfs with files open for writing
// cannot be remounted read-only): a push answers 503, /readyz 503
// "read-only", and both recover.
func TestOutageSQLiteReadOnly(t *testing.T) {
	testenv.SQLiteOnly(t, "makes the SQLite writer read-only")
	t.Parallel() // a node, a data dir and a log of its own
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1")

	execWriter(t, e, "PRAGMA query_only = 1")
	resp, took := e.outagePush(a, "ro")
	t.Logf("read-only: push answered %d in %s", resp.Status, took.Round(time.Millisecond))
	checkUnavailable(t, "push on a read-only store", resp)
	e.waitReadyz(t, http.StatusServiceUnavailable, "database cannot take writes: read-only")
	e.waitHeld()

	execWriter(t, e, "PRAGMA query_only = 0")
	e.waitReadyz(t, http.StatusOK, "")
	if resp, _ := e.outagePush(a, "ro"); resp.Status != http.StatusOK {
		t.Fatalf("push once writable: got %d %s, want 200", resp.Status, resp.Body)
	}
	testenv.WaitFor(t, "the push delivered", 20*time.Second, func() bool { return len(e.Received("tok-u1")) >= 1 })
	e.checkOutageLog(1)
}
