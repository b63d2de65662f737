package sqlite

import (
	"context"
	"errors"
	"testing"
	"time"
)

// queued waits until the gate has urgent and bulk waiters.
func queued(t *testing.T, g *gate, urgent, bulk int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		g.mu.Lock()
		u, b := len(g.urgent), len(g.bulk)
		g.mu.Unlock()
		if u == urgent && b == bulk {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiters: got %d urgent and %d bulk, want %d and %d", u, b, urgent, bulk)
		}
		time.Sleep(time.Millisecond) // the poll interval; the deadline bounds the wait
	}
}

// TestGateUrgentFirst: waiting requests get the writer before bulk work
// that waited longer, each kind in order of arrival.
func TestGateUrgentFirst(t *testing.T) {
	t.Parallel()
	var g gate
	ctx := context.Background()
	if err := g.enter(ctx, true); err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 4)
	start := func(name string, bulk bool) {
		go func() {
			if err := g.enter(ctx, bulk); err != nil {
				order <- "error: " + err.Error()
				return
			}
			order <- name
			g.leave()
		}()
	}
	start("bulk 1", true)
	queued(t, &g, 0, 1)
	start("bulk 2", true)
	queued(t, &g, 0, 2)
	start("urgent 1", false)
	queued(t, &g, 1, 2)
	start("urgent 2", false)
	queued(t, &g, 2, 2)
	g.leave()
	for _, want := range []string{"urgent 1", "urgent 2", "bulk 1", "bulk 2"} {
		if got := <-order; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	// Every waiter left: the writer is free again.
	if err := g.enter(ctx, true); err != nil {
		t.Fatal(err)
	}
	g.leave()
}

// TestGateCancelled: a waiter whose context ends leaves the queue, and the
// writer goes on to the next.
func TestGateCancelled(t *testing.T) {
	t.Parallel()
	var g gate
	if err := g.enter(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() { gaveUp <- g.enter(ctx, false) }()
	queued(t, &g, 1, 0)
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: got %v, want context.Canceled", err)
	}
	queued(t, &g, 0, 0)
	entered := make(chan struct{})
	go func() {
		if g.enter(context.Background(), true) == nil {
			close(entered)
		}
	}()
	queued(t, &g, 0, 1)
	g.leave()
	<-entered
}
