package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

var holdTests = []test{
	{"HoldPushes/DueAndSending", testHoldDueAndSending},
	{"HeldWork/WhatIsLeft", testHeldWork},
	{"ReleaseHeld/StatusAndJobs", testReleaseHeld},
	{"CancelHeld/RefundsWhatNeverBegan", testCancelHeld},
	{"FinishPush/LeavesHeldAlone", testFinishLeavesHeld},
	{"Held/ErrNotHeld", testNotHeld},
}

// hold holds what is due or sending at at and returns the held ids.
func (b *bundle) hold(at time.Time) []string {
	b.t.Helper()
	ps, err := b.s.HoldPushes(b.ctx, at)
	must(b.t, "HoldPushes", err)
	ids := make([]string, len(ps))
	for i, p := range ps {
		if p.Status != herald.StatusHeld {
			b.t.Errorf("HoldPushes: %s got %s, want held", p.ID, p.Status)
		}
		ids[i] = p.ID
	}
	return ids
}

func testHoldDueAndSending(t *testing.T, b *bundle) {
	due := b.acceptScheduled(sendAt, "u1")
	b.tick(time.Second)
	later := b.acceptScheduled(sendAt.Add(time.Minute), "u2")
	b.tick(time.Second)
	sending, _ := b.sending(2, 1)
	b.tick(time.Second)
	cancelled := b.acceptScheduled(sendAt, "u3")
	_, err := b.cancel(cancelled.ID)
	must(t, "CancelScheduled", err)

	if got, want := b.hold(sendAt), []string{due.ID, sending.ID}; !slices.Equal(got, want) {
		t.Errorf("held: got %v, want the due push and the sending one %v, oldest first", got, want)
	}
	for id, want := range map[string]herald.PushStatus{due.ID: herald.StatusHeld, sending.ID: herald.StatusHeld,
		later.ID: herald.StatusScheduled, cancelled.ID: herald.StatusCancelled} {
		if got := b.pushOf(id).Status; got != want {
			t.Errorf("push %s: got %s, want %s", id, got, want)
		}
	}
	if got := b.hold(sendAt); len(got) != 0 {
		t.Errorf("holding again: got %v, want none (held already)", got)
	}
}

func testHeldWork(t *testing.T, b *bundle) {
	due := b.acceptScheduled(sendAt, "u9")
	sending, _ := b.sending(3, 1) // chunks 0, 1, 2
	b.complete(sending.ID, 1, false)
	b.hold(sendAt)

	w, err := b.s.HeldWork(b.ctx, sending.ID)
	must(t, "HeldWork", err)
	var chunks []int
	for _, c := range w.Chunks {
		chunks = append(chunks, c.Chunk)
	}
	if w.From != herald.StatusSending || !w.FanoutDone || !slices.Equal(chunks, []int{0, 2}) || w.OpenChunks != 2 || w.Push.ID != sending.ID {
		t.Errorf("sending push: got from %s, fan-out done %v, chunks %v, open %d; want sending, true, [0 2], 2", w.From, w.FanoutDone, chunks, w.OpenChunks)
	}
	w, err = b.s.HeldWork(b.ctx, due.ID)
	must(t, "HeldWork", err)
	if w.From != herald.StatusScheduled || w.FanoutDone || len(w.Chunks) != 0 || w.Push.ScheduledAt == nil {
		t.Errorf("scheduled push: got %+v, want from scheduled, no fan-out, no chunks", w)
	}
}

func testReleaseHeld(t *testing.T, b *bundle) {
	due := b.acceptScheduled(sendAt, "u9")
	sending, _ := b.sending(2, 1)
	b.hold(sendAt)
	got, err := b.release(sending.ID, []herald.Job{sendJob(sending.ID, 0), sendJob(sending.ID, 1)})
	if err != nil || got.Status != herald.StatusSending {
		t.Fatalf("release the sending push: got (%s, %v), want sending", got.Status, err)
	}
	b.wantJobs(sendJob(sending.ID, 0).Kind(), 2) // the fan-out's, and the release's
	got, err = b.release(due.ID, []herald.Job{fanoutJob(due.ID)})
	if err != nil || got.Status != herald.StatusScheduled {
		t.Fatalf("release the scheduled push: got (%s, %v), want scheduled", got.Status, err)
	}
	b.wantJobs(fanoutJob(due.ID).Kind(), 2)
	_, err = b.release(due.ID, []herald.Job{fanoutJob(due.ID)})
	wantErr(t, "releasing again", err, herald.ErrNotHeld)
	b.wantJobs(fanoutJob(due.ID).Kind(), 2)
}

func testCancelHeld(t *testing.T, b *bundle) {
	due := b.acceptScheduled(sendAt, "u8", "u9")
	sending, _ := b.sending(2, 1)
	if half := b.usageOn(b.app.ID, today); half != 4 {
		t.Fatalf("charged: got %d, want 4", half)
	}
	b.hold(sendAt)
	b.tick(time.Minute)
	got, err := b.cancel(due.ID)
	if err != nil || got.Status != herald.StatusCancelled || got.FinishedAt == nil || !got.FinishedAt.Equal(b.now) {
		t.Fatalf("cancel the due push: got (%s finished %v, %v), want cancelled now", got.Status, got.FinishedAt, err)
	}
	if half := b.usageOn(b.app.ID, today); half != 2 {
		t.Errorf("usage: got %d, want 2 (the push that never began refunded)", half)
	}
	got, err = b.cancel(sending.ID)
	if err != nil || got.Status != herald.StatusCancelled {
		t.Fatalf("cancel the sending push: got (%s, %v), want cancelled", got.Status, err)
	}
	if half := b.usageOn(b.app.ID, today); half != 2 {
		t.Errorf("usage: got %d, want 2 (a push that began keeps its charge)", half)
	}
	_, err = b.cancel(sending.ID)
	// Cancelled, it is refused as any push no longer scheduled is (what
	// the API answered before the cancel was one step).
	wantErr(t, "cancelling again", err, herald.ErrScheduleLocked)
}

func testFinishLeavesHeld(t *testing.T, b *bundle) {
	sending, _ := b.sending(1, 1)
	b.hold(sendAt)
	finished, err := b.s.FinishPush(b.ctx, sending.ID, nil, []herald.Job{webhookJob(sending.ID, 1)})
	if err != nil || finished {
		t.Fatalf("FinishPush on a held push: got (%v, %v), want (false, nil)", finished, err)
	}
	if rec := b.pushOf(sending.ID); rec.Status != herald.StatusHeld || rec.FinishedAt != nil {
		t.Errorf("stored: got %s finished %v, want held and not finished", rec.Status, rec.FinishedAt)
	}
	b.wantJobs(webhookJob(sending.ID, 1).Kind(), 0)
}

func testNotHeld(t *testing.T, b *bundle) {
	sending, _ := b.sending(1, 1)
	_, err := b.s.HeldWork(b.ctx, sending.ID)
	wantErr(t, "HeldWork of a sending push", err, herald.ErrNotHeld)
	_, err = b.release(sending.ID, nil)
	wantErr(t, "ReleaseHeld of a sending push", err, herald.ErrNotHeld)
	_, err = b.cancel(sending.ID)
	wantErr(t, "cancel of a sending push", err, herald.ErrScheduleLocked)
	_, err = b.s.HeldWork(b.ctx, "push_unknown")
	wantErr(t, "HeldWork of an unknown push", err, herald.ErrNotFound)
	_, err = b.release("push_unknown", nil)
	wantErr(t, "ReleaseHeld of an unknown push", err, herald.ErrNotFound)
}
