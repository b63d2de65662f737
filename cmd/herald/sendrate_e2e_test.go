package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
)

// pushPaced registers n users of a, sends them two pushes of n/2 each at
// once, waits for both and returns the span of the arrivals of all n.
func (e *env) pushPaced(a testApp, n int) time.Duration {
	e.t.Helper()
	var users [2][]any
	for i := range n {
		u := fmt.Sprintf("u%02d", i)
		e.Register(a, "rate-", u)
		users[i*2/n] = append(users[i*2/n], u)
	}
	ids := make([]string, 2)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: users[i], Title: "paced", Content: "c"})
			if err != nil {
				e.t.Errorf("push %d: %v", i, err)
				return
			}
			ids[i] = res.PushID
		})
	}
	wg.Wait()
	if e.t.Failed() {
		e.t.FailNow()
	}
	for i, id := range ids {
		if p := e.WaitFinal(id, 30*time.Second); p.Status != "done" || p.Counts.Sent != len(users[i]) {
			e.t.Errorf("push %s: got %s with %d sent, want done with %d", id, p.Status, p.Counts.Sent, len(users[i]))
		}
	}
	var all []time.Time
	for _, at := range e.Arrivals(ids...) {
		all = append(all, at...)
	}
	if len(all) != n {
		e.t.Fatalf("arrivals: got %d, want %d", len(all), n)
	}
	slices.SortFunc(all, func(x, y time.Time) int { return x.Compare(y) })
	return all[n-1].Sub(all[0])
}

// TestSendRateSharedByNodes: two nodes on one PostgreSQL database share an
// app's rate. Once each has seen the other (its log says so), each paces
// to 5 a second of the app's 10, so 40 sends take at least 3.8 s whichever
// nodes send them (each bucket lets 1 go at once); the test asks 2.8 s.
// Were each node to pace to the whole rate, the two sending side by side
// would take under 2 s.
func TestSendRateSharedByNodes(t *testing.T) {
	t.Parallel()
	if testEngine() != "postgres" {
		t.Skip("several nodes need PostgreSQL: set HERALD_TEST_DATABASE_URL")
	}
	e := start(t)
	second, err := startService(context.Background(), e.config(), io.Discard, e.logs)
	if err != nil {
		t.Fatalf("second node: %v", err)
	}
	t.Cleanup(func() { second.shutdown() })
	waitFor(t, "both nodes to count two", 20*time.Second, func() bool {
		return strings.Count(e.logs.String(), `msg="nodes sharing the send rates" nodes=2`) == 2
	})
	a := e.NewApp(map[string]any{"sendRatePerMinute": 600})
	const n, burst, perNode = 40, 2, 5.0 // burst: one per node
	floor := time.Duration(float64(n-burst)/(2*perNode)*float64(time.Second)) - time.Second
	span := e.pushPaced(a, n)
	if span < floor {
		t.Errorf("the %d sends arrived within %v, want at least %v at 10 a second over both nodes", n, span, floor)
	}
	t.Logf("%d sends over %v on two nodes", n, span)
	var live int
	if err := e.QueryRow(`SELECT COUNT(*) FROM nodes`).Scan(&live); err != nil || live != 2 {
		t.Errorf("nodes table: got %d rows (%v), want 2", live, err)
	}
	second.shutdown()
	if err := e.QueryRow(`SELECT COUNT(*) FROM nodes`).Scan(&live); err != nil || live != 1 {
		t.Errorf("nodes table after a node stopped: got %d rows (%v), want 1", live, err)
	}
}
