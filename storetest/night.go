package storetest

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// The night deferral subtests (herald.NightDefer): a push's deferred
// chunk, its counts, and the operator's cancel with its guard and refund.
var nightTests = []test{
	{"StartSending/DeferredChunk", testDeferredChunk},
	{"CancelDeferred/SuppressesAndRefunds", testCancelDeferred},
	{"CancelDeferred/LastOpenQueuesFinish", testCancelDeferredFinishes},
	{"CancelDeferred/FiveMinuteBoundary", testCancelDeferredBoundary},
	{"CancelDeferred/BegunRefused", testCancelDeferredBegun},
	{"CancelDeferred/NoDeferredPart", testCancelDeferredNone},
	{"CancelDeferred/ConcurrentRefundedOnce", testCancelDeferredConcurrent},
}

// morning is the next 08:00 in Seoul after epoch (22:04:30 there).
var morning = time.Date(2025, 6, 12, 8, 0, 0, 0, time.FixedZone("KST", 9*3600))

// deferring accepts a marketing push with nightPolicy defer to u1..u3 and
// records its fan-out: d1 sent at once in chunk 0, d2 and d3 deferred in
// chunk 1 to the morning, whose cancel refunds u2 and u3.
func (b *bundle) deferring() herald.Push {
	b.t.Helper()
	d1, d2, d3 := b.register("d1", "t1", "u1"), b.register("d2", "t2", "u2"), b.register("d3", "t3", "u3")
	p, rs := b.newPush("u1", "u2", "u3")
	p.Content.Title, p.Marketing, p.NightPolicy = "(광고) sale", true, herald.NightDefer
	b.accept(p, rs)
	ds := plan([]herald.Device{d1, d2, d3}, 10)
	ds[1].Chunk, ds[2].Chunk = 1, 1
	f := fanout(p.ID, ds)
	f.Deferred = []sendstore.DeferredChunk{{Chunk: 1, Until: morning, RefundHalf: 2}}
	b.start(p.ID, f)
	return p
}

// cancelDeferred cancels the push's deferred part at the bundle's time, as
// the delivery service does, and returns the push with its counts.
func (b *bundle) cancelDeferred(pushID string) (herald.Push, error) {
	p, _, err := b.cancelDeferredClosed(pushID)
	return p, err
}

// cancelDeferredClosed is cancelDeferred, also reporting whether the
// cancel closed the push's last open part.
func (b *bundle) cancelDeferredClosed(pushID string) (herald.Push, bool, error) {
	_, e, err := b.s.StepPush(b.ctx, pushID, herald.PushStep{Kind: herald.StepCancel, At: b.now, Job: finishJob(pushID)})
	if err != nil {
		return herald.Push{}, false, err
	}
	if e.Trail == nil || e.Trail.DeferredCancelled == nil || !e.Trail.DeferredCancelled.DeferredUntil.Equal(morning) {
		b.t.Errorf("the cancel's trail entry: got %+v, want the part deferred until %v", e.Trail, morning)
	}
	p, err := b.s.Push(b.ctx, pushID)
	return p, e.Closed, err
}

// wantDeferred fails unless the push has n tokens deferred, until the
// morning when n > 0.
func (b *bundle) wantDeferred(pushID string, n int) herald.Push {
	b.t.Helper()
	p := b.pushOf(pushID)
	if p.Counts.DeferredNight != n || (n > 0) != (p.DeferredUntil != nil) || n > 0 && !p.DeferredUntil.Equal(morning) {
		b.t.Errorf("got deferredNight %d until %v, want %d (until %v while any)", p.Counts.DeferredNight, p.DeferredUntil, n, morning)
	}
	return p
}

func testDeferredChunk(t *testing.T, b *bundle) {
	p := b.deferring()
	got := b.wantDeferred(p.ID, 2)
	if got.NightPolicy != herald.NightDefer || got.Status != herald.StatusSending || got.Counts.Tokens != 3 || got.Counts.SuppressedNight != 0 {
		t.Errorf("got %+v, want a sending push with defer, 3 tokens, none suppressed", got)
	}
	w, err := b.s.ResumeChunk(b.ctx, p.ID, 1)
	if err != nil || w.Range != rng(0, 0) || len(w.Slots) != 2 || w.Slots[0].DeviceID != "d2" || w.Slots[1].DeviceID != "d3" {
		t.Fatalf("deferred chunk: got (%+v, %v), want d2 and d3 to send", w, err)
	}
	// The morning's run settles them one by one: deferred until sent.
	b.advance(p.ID, sendstore.ChunkStep{Chunk: 1, New: rng(0, 2), Targets: slotTargets(0, w.Slots...)}, 2)
	b.advance(p.ID, sendstore.ChunkStep{Chunk: 1, Old: rng(0, 2), New: rng(1, 2)}, 2)
	b.wantDeferred(p.ID, 1)
	b.advance(p.ID, sendstore.ChunkStep{Chunk: 1, Old: rng(1, 2), New: rng(2, 2)}, 2)
	b.complete(p.ID, 1, false)
	if got := b.wantDeferred(p.ID, 0); got.Counts.Sent != 2 {
		t.Errorf("after the morning: got %+v, want 2 sent", got.Counts)
	}
	if other := b.acceptUsers("u1"); b.pushOf(other.ID).NightPolicy != "" {
		t.Errorf("a push without the option: got policy %q, want none", b.pushOf(other.ID).NightPolicy)
	}
}

func testCancelDeferred(t *testing.T, b *bundle) {
	p := b.deferring()
	if b.usageOn(b.app.ID, today) != 3 {
		t.Fatalf("charge: got %d half units, want 3", b.usageOn(b.app.ID, today))
	}
	got, closed, err := b.cancelDeferredClosed(p.ID)
	must(t, "CancelDeferred", err)
	if closed {
		t.Errorf("closed: got true, want false (chunk 0 is open)")
	}
	wantCancelEdit(t, got, herald.DeferredCancel{DeferredUntil: morning.UTC(), Tokens: 2, Users: 2, RefundedServerActions: 1}, "1.5", "0.5")
	if got.Counts.SuppressedNight != 2 || got.Counts.DeferredNight != 0 || got.DeferredUntil != nil || got.ServerActionsHalf != 1 {
		t.Errorf("answer: got counts %+v until %v, %d half units; want 2 suppressed by the night, none deferred, 1", got.Counts,
			got.DeferredUntil, got.ServerActionsHalf)
	}
	if rec := b.wantDeferred(p.ID, 0); rec.Counts.SuppressedNight != 2 || rec.Counts.Tokens != 3 || rec.ServerActionsHalf != 1 ||
		rec.Status != herald.StatusSending {
		t.Errorf("stored: got %+v, want 2 suppressed of 3 tokens, 1 half unit, still sending (chunk 0 is open)", rec)
	}
	if got := b.usageOn(b.app.ID, today); got != 1 {
		t.Errorf("ledger: got %d half units, want 3 charged less 2 refunded", got)
	}
	states := b.states(p.ID)
	if len(states) != 3 || states[0] != herald.DeliveryPending || states[1] != herald.DeliverySuppressedNight || states[2] != herald.DeliverySuppressedNight {
		t.Errorf("deliveries: got %v, want d1 pending, d2 and d3 suppressed by the night", states)
	}
	b.wantJobs(finishJob(p.ID).Kind(), 0)
	// The deferred chunk's job, when it runs, finds nothing to send.
	if w, err := b.s.ResumeChunk(b.ctx, p.ID, 1); err != nil || len(w.Slots) != 0 {
		t.Errorf("cancelled chunk: got (%+v, %v), want no work", w, err)
	}
	b.complete(p.ID, 0, true)
	b.complete(p.ID, 1, true) // done by the cancel; the push is still to finish
	b.wantJobs(finishJob(p.ID).Kind(), 0)
	_, err = b.cancelDeferred(p.ID)
	wantErr(t, "cancel again", err, herald.ErrScheduleLocked)
	if b.usageOn(b.app.ID, today) != 1 {
		t.Errorf("refunded twice: got %d half units", b.usageOn(b.app.ID, today))
	}
}

func testCancelDeferredFinishes(t *testing.T, b *bundle) {
	p := b.deferring()
	b.complete(p.ID, 0, false)
	b.wantJobs(finishJob(p.ID).Kind(), 0)
	_, closed, err := b.cancelDeferredClosed(p.ID)
	must(t, "CancelDeferred", err)
	if !closed {
		t.Errorf("closed: got false, want true (nothing else is open)")
	}
	b.wantJobs(finishJob(p.ID).Kind(), 1)
}

// wantCancelEdit fails unless the push's edit trail ends with the cancel
// of its deferred part: what was cancelled, and its charge from and to.
func wantCancelEdit(t *testing.T, p herald.Push, want herald.DeferredCancel, from, to string) {
	t.Helper()
	if len(p.Edits) == 0 || p.Edits[len(p.Edits)-1].DeferredCancelled == nil {
		t.Fatalf("edits: got %+v, want the cancel of the deferred part last", p.Edits)
	}
	e := p.Edits[len(p.Edits)-1]
	if got := *e.DeferredCancelled; !got.DeferredUntil.Equal(want.DeferredUntil) || got.Tokens != want.Tokens || got.Users != want.Users ||
		got.RefundedServerActions != want.RefundedServerActions {
		t.Errorf("edit: got %+v, want %+v", got, want)
	}
	if e.From["serverActions"] != from || e.Changes["serverActions"] != to || e.Changes["deferredNight"] != "0" {
		t.Errorf("edit: got changes %v from %v, want serverActions %s → %s and deferredNight → 0", e.Changes, e.From, from, to)
	}
}

func testCancelDeferredBoundary(t *testing.T, b *bundle) {
	p := b.deferring()
	b.setNow(morning.Add(-herald.DeferCancelDeadline).Add(time.Millisecond))
	_, err := b.cancelDeferred(p.ID)
	wantErr(t, "within 5 minutes", err, herald.ErrScheduleLocked)
	if rec := b.wantDeferred(p.ID, 2); rec.ServerActionsHalf != 3 || b.usageOn(b.app.ID, today) != 3 {
		t.Errorf("refused cancel changed the charge: %d half units, ledger %d", rec.ServerActionsHalf, b.usageOn(b.app.ID, today))
	}
	b.setNow(morning.Add(-herald.DeferCancelDeadline))
	_, err = b.cancelDeferred(p.ID)
	wantErr(t, "exactly 5 minutes before", err, nil)
	b.wantDeferred(p.ID, 0)
}

func testCancelDeferredBegun(t *testing.T, b *bundle) {
	p := b.deferring()
	w := b.resume(p.ID, 1)
	b.advance(p.ID, sendstore.ChunkStep{Chunk: 1, New: rng(0, 1), Targets: slotTargets(0, w.Slots[:1]...)}, 1)
	_, err := b.cancelDeferred(p.ID)
	wantErr(t, "after the morning's run began", err, herald.ErrScheduleLocked)
	if rec := b.wantDeferred(p.ID, 2); rec.ServerActionsHalf != 3 || rec.Counts.SuppressedNight != 0 {
		t.Errorf("refused cancel changed the push: %+v", rec)
	}
}

func testCancelDeferredNone(t *testing.T, b *bundle) {
	p, _ := b.sending(2, 10)
	_, err := b.cancelDeferred(p.ID)
	wantErr(t, "a push without a deferred part", err, herald.ErrScheduleLocked)
	_, err = b.cancelDeferred("push_unknown")
	// An unknown push is not found, as the API has always answered.
	wantErr(t, "an unknown push", err, herald.ErrNotFound)
}

func testCancelDeferredConcurrent(t *testing.T, b *bundle) {
	p := b.deferring()
	var ok, locked atomic.Int32
	var e errs
	concurrently(4, func(int) {
		_, err := b.cancelDeferred(p.ID)
		switch {
		case err == nil:
			ok.Add(1)
		case errors.Is(err, herald.ErrScheduleLocked):
			locked.Add(1)
		default:
			e.add(err)
		}
	})
	e.report(t, "CancelDeferred")
	if ok.Load() != 1 || locked.Load() != 3 {
		t.Errorf("got %d cancels and %d refusals, want 1 and 3", ok.Load(), locked.Load())
	}
	if rec := b.pushOf(p.ID); rec.ServerActionsHalf != 1 || b.usageOn(b.app.ID, today) != 1 || rec.Counts.SuppressedNight != 2 {
		t.Errorf("got %d half units, ledger %d, %d suppressed; want one refund of 2", rec.ServerActionsHalf, b.usageOn(b.app.ID, today),
			rec.Counts.SuppressedNight)
	}
}
