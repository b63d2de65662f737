package storetest

import (
	"slices"
	"sync"
	"testing"
	"time"
)

var nodeTests = []test{
	{"Heartbeat", testHeartbeat},
	{"LeaveNodes", testLeaveNodes},
	{"ReleaseDeadNodes", testReleaseDeadNodes},
}

// testHeartbeat: each node counts itself and the nodes seen since the
// given time; a node that stops beating stops counting, and one beating
// again counts once.
func testHeartbeat(t *testing.T, b *bundle) {
	beat := func(node string, at time.Time) int {
		t.Helper()
		n, err := b.s.Heartbeat(b.ctx, node, at, at.Add(-15*time.Second))
		must(t, "Heartbeat "+node, err)
		return n
	}
	t0 := b.now
	if n := beat("n1", t0); n != 1 {
		t.Errorf("first node: got %d live, want 1", n)
	}
	if n := beat("n2", t0.Add(2*time.Second)); n != 2 {
		t.Errorf("second node: got %d live, want 2", n)
	}
	if n := beat("n1", t0.Add(5*time.Second)); n != 2 {
		t.Errorf("first node again: got %d live, want 2 (a node counts once)", n)
	}
	// n2 last beat at t0+2s: at t0+20s it is 18 s old, past 15 s.
	if n := beat("n1", t0.Add(20*time.Second)); n != 1 {
		t.Errorf("after n2 stopped: got %d live, want 1", n)
	}
	if n := beat("n2", t0.Add(21*time.Second)); n != 2 {
		t.Errorf("n2 back: got %d live, want 2", n)
	}
	// Far later: the old rows are removed, and only n3 counts.
	if n := beat("n3", t0.Add(2*time.Hour)); n != 1 {
		t.Errorf("two hours later: got %d live, want 1", n)
	}
	if n, err := b.s.Heartbeat(b.ctx, "n3", t0.Add(2*time.Hour), t0); err != nil || n != 1 {
		t.Errorf("counting since the start: got (%d, %v), want 1 (the rows of n1 and n2 removed)", n, err)
	}
}

// testLeaveNodes: a node that leaves no longer counts.
func testLeaveNodes(t *testing.T, b *bundle) {
	since := b.now.Add(-15 * time.Second)
	for _, node := range []string{"n1", "n2"} {
		_, err := b.s.Heartbeat(b.ctx, node, b.now, since)
		must(t, "Heartbeat", err)
	}
	must(t, "LeaveNodes", b.s.LeaveNodes(b.ctx, "n2"))
	must(t, "LeaveNodes unknown", b.s.LeaveNodes(b.ctx, "n9"))
	if n, err := b.s.Heartbeat(b.ctx, "n1", b.now, since); err != nil || n != 1 {
		t.Errorf("after n2 left: got (%d, %v), want 1", n, err)
	}
}

// testReleaseDeadNodes: the nodes last seen before the given time are
// forgotten, each by one of the live nodes judging at once; the others
// stay and count.
func testReleaseDeadNodes(t *testing.T, b *bundle) {
	t0 := b.now
	for i, node := range []string{"dead1", "dead2", "live"} {
		_, err := b.s.Heartbeat(b.ctx, node, t0.Add(time.Duration(i)*time.Second), t0)
		must(t, "Heartbeat "+node, err)
	}
	_, err := b.s.Heartbeat(b.ctx, "live", t0.Add(12*time.Second), t0)
	must(t, "Heartbeat live", err)
	at := t0.Add(12 * time.Second)
	var mu sync.Mutex
	var forgot []string
	var wg sync.WaitGroup
	for range 4 { // the live nodes judging the same deaths at once
		wg.Go(func() {
			dead, _, err := b.s.ReleaseDeadNodes(b.ctx, at.Add(-9*time.Second), at)
			if err != nil {
				t.Errorf("ReleaseDeadNodes: %v", err)
			}
			mu.Lock()
			forgot = append(forgot, dead...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(forgot)
	if !slices.Equal(forgot, []string{"dead1", "dead2"}) {
		t.Errorf("forgotten: got %v, want dead1 and dead2, each once", forgot)
	}
	if n, err := b.s.Heartbeat(b.ctx, "live", at, t0); err != nil || n != 1 {
		t.Errorf("nodes since the start: got (%d, %v), want 1 (the dead forgotten)", n, err)
	}
}
