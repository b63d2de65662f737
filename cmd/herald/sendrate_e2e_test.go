package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

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
	span := e.PushPaced(a, n)
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
