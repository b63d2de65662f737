package sqlstore

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

// heldEngine is an Engine whose transactions wait until released, and
// whose ExecMany reports one row changed per argument list; it records
// how many rows each transaction wrote.
type heldEngine struct {
	release chan struct{}
	entered chan struct{}
	mu      sync.Mutex
	batches []int
}

func (e *heldEngine) Reader() Querier { return nil }

func (e *heldEngine) InTx(ctx context.Context, _ TxOptions, fn func(Tx) error) error {
	e.entered <- struct{}{}
	<-e.release
	return fn(heldTx{e})
}

func (e *heldEngine) Translate(err error) error { return err }

type heldTx struct{ e *heldEngine }

func (heldTx) Exec(context.Context, string, ...any) (int64, error) { return 0, nil }
func (heldTx) Query(context.Context, string, ...any) (Rows, error) { return nil, errors.ErrUnsupported }
func (heldTx) QueryRow(context.Context, string, ...any) Row        { return nil }
func (heldTx) InsertJobs(context.Context, []herald.Job) ([]int64, error) {
	return nil, errors.ErrUnsupported
}
func (heldTx) CancelJob(context.Context, int64) error { return errors.ErrUnsupported }
func (heldTx) Pipeline(context.Context, []Stmt) error { return errors.ErrUnsupported }

func (t heldTx) ExecMany(_ context.Context, query string, args [][]any) ([]int64, error) {
	out := make([]int64, len(args))
	for i := range out {
		out[i] = 1
	}
	if len(args) > 0 && len(args[0]) == 5 { // the rows, not the counts
		t.e.mu.Lock()
		t.e.batches = append(t.e.batches, len(args))
		t.e.mu.Unlock()
	}
	return out, nil
}

func eventOpOf(ctx context.Context, device string) *eventOp {
	return &eventOp{ctx: ctx, recorded: make([]bool, 1), rows: []eventRow{{pushID: "p", deviceID: device, typ: herald.EventReceived,
		at: time.Unix(0, 0)}}}
}

// TestEventQueue: requests that queue while a batch is written share the
// next one; one whose context ends while it waits leaves the queue without
// holding up the others, and is answered its context's error.
func TestEventQueue(t *testing.T) {
	t.Parallel()
	e := &heldEngine{release: make(chan struct{}), entered: make(chan struct{}, 4)}
	s := New(e)
	errs := make(chan error, 4)
	run := func(op *eventOp) { errs <- s.events.run(s, op) }

	first := eventOpOf(context.Background(), "d1")
	go run(first)
	<-e.entered // the first request leads, its batch held in the transaction
	ctx, cancel := context.WithCancel(context.Background())
	gone := eventOpOf(ctx, "d2")
	go run(gone)
	waiting := []*eventOp{eventOpOf(context.Background(), "d3"), eventOpOf(context.Background(), "d4")}
	for _, op := range waiting {
		go run(op)
	}
	waitQueued(t, &s.events, 3)
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("request whose context ended: got %v, want context.Canceled", err)
	}
	close(e.release)
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatalf("got %v, want nil", err)
		}
	}
	for _, op := range append([]*eventOp{first}, waiting...) {
		if !op.recorded[0] {
			t.Errorf("%s: not recorded", op.rows[0].deviceID)
		}
	}
	if gone.recorded[0] {
		t.Errorf("the request that left was recorded")
	}
	if len(e.batches) != 2 || e.batches[0] != 1 || e.batches[1] != 2 {
		t.Errorf("batches: got %v, want [1 2] (the two that waited together)", e.batches)
	}
}

// waitQueued polls until n requests wait in the queue.
func waitQueued(t *testing.T, q *eventQueue, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		q.mu.Lock()
		got := len(q.queue)
		q.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue: got %d waiting, want %d", got, n)
		}
		time.Sleep(time.Millisecond) // polling interval, not a wait for work
	}
}
