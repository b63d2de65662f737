package sim

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/delivery"
)

// node is one simulated Herald process: a delivery service on the shared
// store, its schedule watch, and the jobs it fetched. It is its own FCM
// client and webhook sender, whose calls are scheduling points too.
type node struct {
	w         *world
	id, inc   int
	name      string
	ctx       context.Context
	cancel    context.CancelFunc
	store     *Store
	svc       *delivery.Service
	stopWatch func()
	jobs      int // fetched and not finished (the scheduler's count)
	dead      bool
	deadNow   atomic.Bool // dead, as the node's goroutines read it
	dying     bool        // dies once the call it was granted ends
	// jobs counts the runs fetched and not finished (under w.mu).
	restartAt time.Time
}

// point is a scheduling point of one of the node's store calls.
func (n *node) point(ctx context.Context, kind pointKind, method string, args ...any) (verdict, error) {
	if n.deadNow.Load() {
		return verdict{}, errDead
	}
	key := method
	for _, a := range args {
		if s, ok := a.(string); ok {
			key += " " + n.w.alias(s)
		}
	}
	v := n.w.wait(ctx, n, kind, key, args...)
	switch {
	case v.dieBefore:
		return v, errDead
	case v.errBefore != nil:
		return v, v.errBefore
	}
	return v, nil
}

// die kills the node: its calls waiting and to come fail without effect,
// its jobs stay running in the queue as a crash leaves them (River's
// rescuer frees them), and it comes back as a new node a little later.
func (n *node) die() {
	w := n.w
	n.dying = false
	if n.dead {
		return
	}
	n.dead = true
	n.deadNow.Store(true)
	n.restartAt = time.Now().Add(time.Duration(w.rng.IntN(180)) * time.Second)
	w.obs.deaths++
	w.mu.Lock()
	var mine []*waiter
	rest := w.waiting[:0]
	for _, wt := range w.waiting {
		if wt.node == n {
			mine = append(mine, wt)
		} else {
			rest = append(rest, wt)
		}
	}
	w.waiting = rest
	w.mu.Unlock()
	for _, wt := range mine {
		wt.turn <- verdict{dieBefore: true}
	}
	n.cancel()
	go n.stopWatch()
}

// fetch takes one due job, as River's producer on this node would, and
// runs it.
func (n *node) fetch(now time.Time) {
	row := n.w.env.claim(n, now)
	if row == nil {
		return
	}
	n.w.mu.Lock()
	n.jobs++
	n.w.mu.Unlock()
	unit, err := n.svc.Unit(row)
	if err != nil {
		n.w.t.Errorf("job %d: %v", row.ID, err)
		return
	}
	timeout := unit.Timeout
	if timeout == 0 {
		timeout = delivery.JobTimeout
	}
	actor := fmt.Sprintf("%s/job%d.%d", n.name, row.ID, row.Attempt)
	go func() {
		ctx, cancel := context.WithTimeout(withActor(n.ctx, actor), timeout)
		err := unit.Work(ctx)
		cancel()
		// River's middleware: a job that met an unavailable store is
		// snoozed a second, not retried (delivery's storeRetry).
		if errors.Is(err, herald.ErrUnavailable) && ctx.Err() == nil {
			err = river.JobSnooze(time.Second)
		}
		n.finish(withActor(context.Background(), actor), row, unit, err)
	}()
}

// finish records a job's end in the queue, as River's completer does,
// unless the node died first.
func (n *node) finish(ctx context.Context, row *rivertype.JobRow, unit delivery.JobUnit, err error) {
	defer func() { n.w.doneJob(n) }()
	if _, perr := n.point(ctx, pointFinish, "finish"); perr != nil {
		return
	}
	n.w.env.complete(row, unit, err)
}

// ForApp is the node's FCM client for an app.
func (n *node) ForApp(string, []byte) herald.AppSender { return n }

// Authorize is a scheduling point: the token endpoint answers from the
// seed.
func (n *node) Authorize(ctx context.Context) error {
	v, err := n.point(ctx, pointAuth, "Authorize")
	if err != nil {
		return err
	}
	return v.answer
}

// Deliver is a scheduling point: FCM answers from the seed. A send
// granted reached FCM (the scheduler noted it), whatever befalls the
// node after.
func (n *node) Deliver(ctx context.Context, msg herald.Notification) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	v, err := n.point(ctx, pointFCM, "Deliver", msg.PushID, msg.Token, msg)
	if err != nil {
		return err
	}
	return v.answer
}

// Report is a scheduling point: the app's webhook receiver answers from
// the seed.
func (n *node) Report(ctx context.Context, _, _ string, r herald.UndeliverableReport) error {
	v, err := n.point(ctx, pointWebhook, "Report", r.PushID, r)
	if err != nil {
		return err
	}
	return v.answer
}

// ConsentChanged is a scheduling point as Report is.
func (n *node) ConsentChanged(ctx context.Context, _, _ string, r herald.ConsentRecord) error {
	v, err := n.point(ctx, pointWebhook, "ConsentChanged")
	if err != nil {
		return err
	}
	return v.answer
}

// ApprovalRequested is a scheduling point as Report is.
func (n *node) ApprovalRequested(ctx context.Context, _, _ string, r herald.ApprovalRequest) error {
	v, err := n.point(ctx, pointWebhook, "ApprovalRequested", r.PushID)
	if err != nil {
		return err
	}
	return v.answer
}

// doneJob notes a job run of n ended (on the scheduler's side).
func (w *world) doneJob(n *node) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n.jobs--
}
