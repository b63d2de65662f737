package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"
)

// spreadStep waits until exactly want tokens of push id reached the
// emulator, each once, with no send job due or running: on the frozen
// clock nothing more can be sent, so an early or a second send shows.
func spreadStep(t *testing.T, e *env, id string, want int) {
	t.Helper()
	busy := func() int {
		var n int
		if err := e.QueryRow(`SELECT COUNT(*) FROM river_job WHERE kind = 'herald.send' AND state IN ('available', 'running', 'retryable')`).Scan(&n); err != nil {
			t.Fatalf("send jobs (%d): %v", want, err)
		}
		return n
	}
	testenv.WaitFor(t, fmt.Sprintf("%d tokens sent", want), 60*time.Second, func() bool { return len(e.SentTo(id)) >= want && busy() == 0 })
	sent := e.SentTo(id)
	if len(sent) != want {
		t.Fatalf("got %d tokens sent, want %d", len(sent), want)
	}
	for token, n := range sent {
		if n != 1 {
			t.Fatalf("token %s sent %d times, want once", token, n)
		}
	}
}

// startSpread pushes to 40 users over 10 minutes at start0 on the frozen
// clk (user k due at start0 + k × 15 s) and waits for user 0.
func startSpread(t *testing.T, e *env, clk *testClock, start0 time.Time) string {
	t.Helper()
	a := e.NewApp(map[string]any{"tier": "business"})
	users := make([]string, 40)
	ids := make([]any, len(users))
	for i := range users {
		users[i] = fmt.Sprintf("u%02d", i)
		ids[i] = users[i]
	}
	e.Register(a, "spread-", users...)
	clk.Freeze(start0)
	res := e.ServerDo("POST", "/api/push/v2/users", a.Keys(), map[string]any{"userIds": ids, "title": "Sale", "content": "Today",
		"options": map[string]any{"spreadMinutes": 10}})
	if res.Status != http.StatusOK {
		t.Fatalf("push: got %d %s", res.Status, res.Body)
	}
	id := res.Header.Get("X-Push-Id")
	spreadStep(t, e, id, 1)
	return id
}

// finishSpread steps the clock through the rest of the spread from 7:07
// and checks the push ends done with every user sent once.
func finishSpread(t *testing.T, e *env, clk *testClock, start0 time.Time, id string) {
	t.Helper()
	clk.Freeze(start0.Add(7*time.Minute + 7*time.Second))
	spreadStep(t, e, id, 29)
	clk.Freeze(start0.Add(10 * time.Minute))
	if p := e.WaitFinal(id, 60*time.Second); p.Status != "done" || p.Counts.Sent != 40 {
		t.Fatalf("at the end: got %s, %d sent; want done, 40 sent", p.Status, p.Counts.Sent)
	}
	spreadStep(t, e, id, 40)
}

// TestSpreadRestart: the service stops halfway through a spread push and
// starts again on the same data later; the users that came due while it
// was down are sent at once, the rest keep their schedule (nothing early),
// none twice.
func TestSpreadRestart(t *testing.T) {
	t.Parallel()
	clk := &testClock{}
	start0 := time.Date(2026, 12, 2, 14, 0, 0, 0, testenv.Seoul)
	clk.Freeze(start0.Add(-time.Minute))
	e := startClocked(t, clk)
	id := startSpread(t, e, clk, start0)
	clk.Freeze(start0.Add(2*time.Minute + 7*time.Second))
	spreadStep(t, e, id, 9)
	if err := e.svc.shutdown(); err != nil {
		t.Fatal(err)
	}
	clk.Freeze(start0.Add(5*time.Minute + 7*time.Second)) // users 9–20 come due while it is down
	e.startService(func(c *config) { c.overrides.Clock = clk.Now })
	spreadStep(t, e, id, 21)
	finishSpread(t, e, clk, start0, id)
}

// TestSpreadNodes (PostgreSQL): two nodes on one schema; the node that
// accepted the spread push stops halfway, and the other sends the rest on
// schedule, none twice.
func TestSpreadNodes(t *testing.T) {
	if testEngine() != "postgres" {
		t.Skip("several nodes need PostgreSQL: set HERALD_TEST_DATABASE_URL")
	}
	t.Parallel()
	clk := &testClock{}
	start0 := time.Date(2026, 12, 2, 14, 0, 0, 0, testenv.Seoul)
	clk.Freeze(start0.Add(-time.Minute))
	e := startClocked(t, clk)
	other, err := startService(context.Background(), e.config(func(c *config) { c.overrides.Clock = clk.Now }), io.Discard, e.logs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.shutdown() })
	id := startSpread(t, e, clk, start0)
	clk.Freeze(start0.Add(2*time.Minute + 7*time.Second))
	spreadStep(t, e, id, 9)
	if err := e.svc.shutdown(); err != nil { // the accepting node goes away; the other goes on
		t.Fatal(err)
	}
	e.svc = other
	e.bind() // the harness reads through the other node
	clk.Freeze(start0.Add(5*time.Minute + 7*time.Second))
	spreadStep(t, e, id, 21)
	finishSpread(t, e, clk, start0, id)
}
