package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/retention"
	"github.com/heraldpush/herald/sendstore"
)

// The stream subtests: the queue of an app's delivery events, written with
// the steps that record their outcomes, and the lease of its dispatcher.
var streamTests = []test{
	{"AdvanceChunk/QueuesEventsOnce", testStreamQueues},
	{"AdvanceChunk/NoStreamNoEvents", testStreamOff},
	{"ClaimStream/OneHolder", testStreamClaim},
	{"SentEvents/OnlyThoseSent", testStreamSent},
	{"StreamApps", testStreamApps},
	{"PruneDeliveryEvents", testStreamPrune},
}

// queued returns the app's queued events, failing the test on an error.
func (b *bundle) queued() []herald.DeliveryEvent {
	b.t.Helper()
	es, err := b.s.QueuedEvents(b.ctx, b.app.ID, 100)
	must(b.t, "QueuedEvents", err)
	return es
}

// streamed sends a push to three devices whose step settles d1 and d3
// sent and d2 failed, queuing their events.
func (b *bundle) streamed() (herald.Push, []herald.DeliveryEvent) {
	b.t.Helper()
	p, ds := b.sending(3, 10)
	b.advance(p.ID, sendstore.ChunkStep{New: rng(0, 3), Targets: slotTargets(0, ds...)}, 3)
	failed := ds[1]
	failed.State, failed.Reason, failed.Attempts = herald.DeliveryUndeliverable, herald.ReasonAppDeleted, 1
	st := sendstore.ChunkStep{Old: rng(0, 3), New: rng(3, 3), Rows: []herald.Delivery{failed},
		Stream: &sendstore.Stream{Sent: true, Failed: true, RequestGroupID: "g"}, Sent: []herald.Delivery{ds[0], ds[2]}}
	b.advance(p.ID, st, 3)
	_, _, err := b.s.AdvanceChunk(b.ctx, b.app.ID, p.ID, st) // the step again: its range is gone
	wantErr(b.t, "the step again", err, sendstore.ErrChunkMoved)
	return p, b.queued()
}

func testStreamQueues(t *testing.T, b *bundle) {
	p, got := b.streamed()
	type ev struct{ typ, device, user, suffix, reason string }
	var seen []ev
	for i, e := range got {
		seen = append(seen, ev{string(e.Type), e.DeviceID, e.UserID, e.TokenSuffix, e.Reason})
		if e.AppID != b.app.ID || e.PushID != p.ID || e.RequestGroupID != "g" || !e.At.Equal(b.now) || !e.QueuedAt.Equal(b.now) {
			t.Errorf("event %d: got %+v, want app, push, group g, at now", i, e)
		}
		if i > 0 && e.ID <= got[i-1].ID {
			t.Errorf("ids: got %d after %d, want increasing", e.ID, got[i-1].ID)
		}
	}
	want := []ev{{"push.sent", "d1", "u1", "t1", ""}, {"push.sent", "d3", "u3", "t3", ""}, {"push.failed", "d2", "u2", "t2", "APP_DELETED"}}
	if !slices.Equal(seen, want) {
		t.Errorf("queued: got %v, want %v", seen, want)
	}
	for at, want := range map[time.Duration]bool{0: false, herald.EventsBatchAge - time.Millisecond: false, herald.EventsBatchAge: true} {
		if due, err := b.s.QueueHead(b.ctx, b.app.ID, b.now.Add(at)); err != nil || due != want {
			t.Errorf("QueueHead %s after: got %v %v, want %v", at, due, err, want)
		}
	}
	other := b.newApp("other")
	if due, err := b.s.QueueHead(b.ctx, other.ID, b.now.Add(time.Hour)); err != nil || due {
		t.Errorf("QueueHead of an empty queue: got %v %v, want false", due, err)
	}
}

func testStreamOff(t *testing.T, b *bundle) {
	p, ds := b.sending(2, 10)
	b.advance(p.ID, sendstore.ChunkStep{New: rng(0, 2), Targets: slotTargets(0, ds...)}, 2)
	b.advance(p.ID, step(rng(0, 2), rng(2, 2)), 2)
	if got := b.queued(); len(got) != 0 {
		t.Errorf("queued without a stream: got %v, want none", got)
	}
}

func testStreamClaim(t *testing.T, b *bundle) {
	until := b.now.Add(30 * time.Second)
	st, held, err := b.s.ClaimStream(b.ctx, b.app.ID, "node-a", b.now, until)
	if err != nil || !held || st.Failures != 0 {
		t.Fatalf("first claim: got %+v %v %v, want held, no failures", st, held, err)
	}
	if _, held, err := b.s.ClaimStream(b.ctx, b.app.ID, "node-b", b.now.Add(29*time.Second), until.Add(29*time.Second)); err != nil || held {
		t.Errorf("claim while held: got %v %v, want refused", held, err)
	}
	must(t, "StreamFailed", b.s.StreamFailed(b.ctx, b.app.ID, "node-a", b.now.Add(2*time.Second)))
	must(t, "StreamFailed by another", b.s.StreamFailed(b.ctx, b.app.ID, "node-b", b.now.Add(time.Hour)))
	st, held, err = b.s.ClaimStream(b.ctx, b.app.ID, "node-a", b.now.Add(time.Second), until.Add(time.Second))
	if err != nil || !held || st.Failures != 1 || !st.RetryAt.Equal(b.now.Add(2*time.Second)) {
		t.Errorf("renewed: got %+v %v %v, want held, 1 failure, its retry time", st, held, err)
	}
	st, held, err = b.s.ClaimStream(b.ctx, b.app.ID, "node-b", until.Add(time.Second), until.Add(31*time.Second))
	if err != nil || !held || st.Failures != 1 {
		t.Errorf("claim after the lease: got %+v %v %v, want held with the failures kept", st, held, err)
	}
}

func testStreamSent(t *testing.T, b *bundle) {
	_, got := b.streamed()
	_, held, err := b.s.ClaimStream(b.ctx, b.app.ID, "node-a", b.now, b.now.Add(time.Minute))
	if err != nil || !held {
		t.Fatalf("claim: %v %v", held, err)
	}
	must(t, "StreamFailed", b.s.StreamFailed(b.ctx, b.app.ID, "node-a", b.now.Add(time.Second)))
	must(t, "SentEvents by another", b.s.SentEvents(b.ctx, b.app.ID, "node-b", []int64{got[0].ID, got[1].ID, got[2].ID}))
	if n := len(b.queued()); n != 3 {
		t.Errorf("after another's SentEvents: got %d queued, want 3", n)
	}
	must(t, "SentEvents", b.s.SentEvents(b.ctx, b.app.ID, "node-a", []int64{got[0].ID, got[2].ID}))
	if left := b.queued(); len(left) != 1 || left[0].ID != got[1].ID {
		t.Errorf("after SentEvents of the first and last: got %v, want the middle one", left)
	}
	st, _, err := b.s.ClaimStream(b.ctx, b.app.ID, "node-a", b.now, b.now.Add(time.Minute))
	if err != nil || st.Failures != 0 {
		t.Errorf("failures after a message sent: got %+v %v, want 0", st, err)
	}
}

func testStreamApps(t *testing.T, b *bundle) {
	other := b.newApp("other")
	other.WebhookEvents = []herald.WebhookEvent{herald.WebhookSent}
	must(t, "UpdateApp", b.s.UpdateApp(b.ctx, other))
	got, err := b.s.StreamApps(b.ctx)
	if err != nil || !slices.Equal(got, []string{other.ID}) {
		t.Errorf("StreamApps: got %v %v, want only the app that set its list", got, err)
	}
	if a, err := b.s.App(b.ctx, other.ID); err != nil || !slices.Equal(a.WebhookEvents, other.WebhookEvents) {
		t.Errorf("App: got %v %v, want the list", a.WebhookEvents, err)
	}
}

func testStreamPrune(t *testing.T, b *bundle) {
	b.streamed()
	st, err := b.s.PruneDeliveryEvents(b.ctx, b.now, 10)
	if err != nil || st.Deleted[retention.RetainedDeliveryEvents] != 0 || len(b.queued()) != 3 {
		t.Errorf("prune of those before now: got %+v %v, want none deleted", st, err)
	}
	st, err = b.s.PruneDeliveryEvents(b.ctx, b.now.Add(time.Millisecond), 2)
	if err != nil || st.Deleted[retention.RetainedDeliveryEvents] != 2 || !st.More || len(b.queued()) != 1 {
		t.Errorf("prune of 2: got %+v %v, want 2 deleted and more", st, err)
	}
}
