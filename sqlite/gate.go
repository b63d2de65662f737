package sqlite

import (
	"context"
	"slices"
	"sync"
)

// gate orders the store's transactions on the one writer: a transaction
// answering an API request goes before bulk delivery work waiting with it
// (sqlstore.TxOptions.Bulk), each kind in order of arrival. Without it every
// waiter is as likely as any other to get the writer next, and an accept
// could wait behind a long row of a fan-out's small writes. River's own
// writes do not pass the gate; they meet the one transaction holding it
// at the writer's connection.
type gate struct {
	mu     sync.Mutex
	held   bool
	urgent []chan struct{}
	bulk   []chan struct{}
}

// enter waits for the writer; leave must follow unless it fails (only
// when ctx ends first).
func (g *gate) enter(ctx context.Context, bulk bool) error {
	g.mu.Lock()
	if !g.held && len(g.urgent) == 0 && (!bulk || len(g.bulk) == 0) {
		g.held = true
		g.mu.Unlock()
		return nil
	}
	turn := make(chan struct{})
	if bulk {
		g.bulk = append(g.bulk, turn)
	} else {
		g.urgent = append(g.urgent, turn)
	}
	g.mu.Unlock()
	select {
	case <-turn:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		select {
		case <-turn: // given the writer as ctx ended: pass it on
			g.next()
		default:
			g.urgent = slices.DeleteFunc(g.urgent, func(c chan struct{}) bool { return c == turn })
			g.bulk = slices.DeleteFunc(g.bulk, func(c chan struct{}) bool { return c == turn })
		}
		return ctx.Err()
	}
}

// leave hands the writer to the next waiter, urgent ones first.
func (g *gate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.next()
}

// next gives the writer to the next waiter, or frees it; g.mu is held.
func (g *gate) next() {
	var turn chan struct{}
	switch {
	case len(g.urgent) > 0:
		turn, g.urgent = g.urgent[0], g.urgent[1:]
	case len(g.bulk) > 0:
		turn, g.bulk = g.bulk[0], g.bulk[1:]
	default:
		g.held = false
		return
	}
	close(turn)
}
