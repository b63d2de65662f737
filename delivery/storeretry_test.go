package delivery

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// flakyAdvance is a store whose AdvanceChunk is unavailable for the calls
// numbered in fail (1-based), as a database restart or failover makes it.
type flakyAdvance struct {
	Store
	mu    sync.Mutex
	calls int
	fail  map[int]bool
}

func (f *flakyAdvance) AdvanceChunk(ctx context.Context, appID, pushID string, st sendstore.ChunkStep) (int, bool, error) {
	f.mu.Lock()
	f.calls++
	failing := f.fail[f.calls]
	f.mu.Unlock()
	if failing {
		return 0, false, herald.Unavailable(errors.New("connection refused"))
	}
	return f.Store.AdvanceChunk(ctx, appID, pushID, st)
}

// TestSendWorkSettleRetried: the step that settles the sends FCM answered
// meets an unavailable store twice; the run keeps the outcomes and writes
// them once the store is back, so the chunk completes in the same run and
// no token is sent again (given up, the run would leave them in flight and
// the next one would resend them).
func TestSendWorkSettleRetried(t *testing.T) {
	t.Parallel()
	b := newWorkBundle(t, 2)
	id := b.accept("u1", "u2")
	must(t, b.record(id))
	flaky := &flakyAdvance{Store: b.db, fail: map[int]bool{2: true, 3: true}} // call 1 marks, 2 and 3 settle
	b.s.sends = flaky
	must(t, b.send(id, 0))
	if flaky.calls < 4 {
		t.Fatalf("AdvanceChunk calls: got %d, want the settle written after two failures", flaky.calls)
	}
	for _, tok := range []string{"t1", "t2"} {
		if n := b.sender.times(tok); n != 1 {
			t.Errorf("sends to %s: got %d, want 1", tok, n)
		}
	}
	if jobs := b.sendJobs(id); len(jobs) != 0 { // a lone chunk has no job
		t.Errorf("send jobs: got %+v, want no retry chunk", jobs)
	}
	if p := b.push(id); p.Status != herald.StatusDone {
		t.Errorf("push: got %s, want done (the chunk completed, and its run finished the push)", p.Status)
	}
	if c := b.push(id).Counts; c.Sent != 2 {
		t.Errorf("counts: got %+v, want 2 sent", c)
	}
}

// TestStoreRetry: a job that failed on an unavailable store is snoozed for
// storeWait (no attempt counted, no River backoff); any other error, or one
// after the job's context ended, is returned as it is.
func TestStoreRetry(t *testing.T) {
	t.Parallel()
	m := &storeRetry{}
	row := &rivertype.JobRow{}
	unavailable := herald.Unavailable(errors.New("too many connections for role"))
	err := m.Work(context.Background(), row, func(context.Context) error { return unavailable })
	var snooze *river.JobSnoozeError
	if !errors.As(err, &snooze) || snooze.Duration != storeWait {
		t.Errorf("unavailable store: got %v, want a snooze of %v", err, storeWait)
	}
	other := errors.New("bug")
	if err := m.Work(context.Background(), row, func(context.Context) error { return other }); err != other {
		t.Errorf("other error: got %v, want it returned", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Work(ctx, row, func(context.Context) error { return unavailable }); !errors.Is(err, herald.ErrUnavailable) {
		t.Errorf("after the job's end: got %v, want the error returned", err)
	}
}
