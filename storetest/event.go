package storetest

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// The event subtests: what devices report about pushes (POST
// /api/sdk/v2/events), counted once per push, device and type.
var eventTests = []test{
	{"CountedOnce", testEventsOnce},
	{"RepeatInOneReport", testEventsRepeatInReport},
	{"OpenedImpliesReceived", testEventsOpenedImpliesReceived},
	{"Ignored", testEventsIgnored},
	{"Untimely", testEventsUntimely},
	{"LaterPage", testEventsLaterPage},
	{"GroupCounts", testEventsGroup},
	{"Concurrent", testEventsConcurrent},
	{"NotSent/Waiting", testEventsNotSentWaiting},
	{"NotSent/Deferred", testEventsNotSentDeferred},
	{"NotSent/DeferralCancelled", testEventsNotSentCancelled},
	{"NotSent/Failed", testEventsNotSentFailed},
	{"InFlight/CountedOnceSent", testEventsInFlightSent},
	{"InFlight/DroppedWhenFailed", testEventsInFlightFailed},
	{"InFlight/FollowsRetryChunk", testEventsInFlightRetried},
	{"InFlight/CountedAtFinish", testEventsInFlightFinish},
}

// sendAll records every slot of the push's fan-out chunks (ds as
// planned, by chunk) sent: marked in flight, then settled.
func (b *bundle) sendAll(pushID string, ds []herald.Delivery) {
	b.t.Helper()
	chunks := map[int][]herald.Delivery{}
	for _, d := range ds {
		if !d.State.Final() {
			chunks[d.Chunk] = append(chunks[d.Chunk], d)
		}
	}
	for chunk, slots := range chunks {
		n := len(slots)
		b.advance(pushID, sendstore.ChunkStep{Chunk: chunk, New: rng(0, n), Targets: slotTargets(0, slots...)}, n)
		b.advance(pushID, sendstore.ChunkStep{Chunk: chunk, Old: rng(0, n), New: rng(n, n)}, n)
	}
}

// sendChunk records every slot of a chunk that has no range yet sent.
func (b *bundle) sendChunk(pushID string, chunk int) {
	b.t.Helper()
	w, err := b.s.ResumeChunk(b.ctx, pushID, chunk)
	if err != nil || w.Range != rng(0, 0) {
		b.t.Fatalf("ResumeChunk: got (%+v, %v), want a chunk not begun", w, err)
	}
	n := len(w.Slots)
	b.advance(pushID, sendstore.ChunkStep{Chunk: chunk, New: rng(0, n), Targets: slotTargets(0, w.Slots...)}, n)
	b.advance(pushID, sendstore.ChunkStep{Chunk: chunk, Old: rng(0, n), New: rng(n, n)}, n)
}

// sent is sending with every slot recorded sent.
func (b *bundle) sent(users int, size int) (herald.Push, []herald.Delivery) {
	b.t.Helper()
	p, ds := b.sending(users, size)
	b.sendAll(p.ID, ds)
	return p, ds
}

// mark is a mark of the push at the bundle's clock.
func (b *bundle) mark(pushID string, typ herald.EventType) herald.EventMark {
	return herald.EventMark{PushID: pushID, Type: typ, At: b.now}
}

// record records marks a device of the bundle's app reports.
func (b *bundle) record(deviceID string, marks ...herald.EventMark) []bool {
	b.t.Helper()
	got, err := b.s.RecordEvents(b.ctx, b.app.ID, deviceID, marks)
	if err != nil {
		b.t.Fatalf("RecordEvents: %v", err)
	}
	return got
}

// report plans a device's events at the bundle's clock, records them and
// returns which were accepted.
func (b *bundle) report(deviceID string, events ...herald.Event) []bool {
	b.t.Helper()
	plan := herald.PlanEvents(events, b.now)
	return plan.Accepted(b.record(deviceID, plan.Marks...))
}

// wantEventCounts fails unless the push counts received and opened.
func (b *bundle) wantEventCounts(pushID string, received, opened int) {
	b.t.Helper()
	c := b.pushOf(pushID).Counts
	if c.Received != received || c.Opened != opened {
		b.t.Errorf("push counts: got received %d, opened %d, want %d, %d", c.Received, c.Opened, received, opened)
	}
}

func wantBools(t *testing.T, what string, got []bool, want ...bool) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}

func testEventsOnce(t *testing.T, b *bundle) {
	p, _ := b.sent(3, 10)
	wantBools(t, "d1 received", b.record("d1", b.mark(p.ID, herald.EventReceived)), true)
	wantBools(t, "d1 received again", b.record("d1", b.mark(p.ID, herald.EventReceived)), false)
	wantBools(t, "d2 received and opened", b.record("d2", b.mark(p.ID, herald.EventReceived), b.mark(p.ID, herald.EventOpened)), true, true)
	wantBools(t, "d2 again", b.record("d2", b.mark(p.ID, herald.EventOpened), b.mark(p.ID, herald.EventReceived)), false, false)
	b.wantEventCounts(p.ID, 2, 1)
	// Listed with the app's pushes, the counts are the same.
	ps, _, err := b.s.Pushes(b.ctx, b.app.ID, herald.PushFilter{Limit: 10})
	must(t, "Pushes", err)
	if len(ps) != 1 || ps[0].Counts.Received != 2 || ps[0].Counts.Opened != 1 {
		t.Errorf("history: got %+v, want one push with received 2, opened 1", ps)
	}
}

func testEventsRepeatInReport(t *testing.T, b *bundle) {
	p, _ := b.sent(1, 10)
	wantBools(t, "twice in one report", b.record("d1", b.mark(p.ID, herald.EventReceived), b.mark(p.ID, herald.EventReceived)), true, false)
	b.wantEventCounts(p.ID, 1, 0)
}

func testEventsOpenedImpliesReceived(t *testing.T, b *bundle) {
	p, _ := b.sent(2, 10)
	wantBools(t, "d1 opened alone", b.report("d1", herald.Event{PushID: p.ID, Type: herald.EventOpened, At: b.now}), true)
	b.wantEventCounts(p.ID, 1, 1)
	wantBools(t, "d1 received after opened", b.report("d1", herald.Event{PushID: p.ID, Type: herald.EventReceived, At: b.now}), false)
	// Received first, then opened: each counts once.
	wantBools(t, "d2 received", b.report("d2", herald.Event{PushID: p.ID, Type: herald.EventReceived, At: b.now}), true)
	wantBools(t, "d2 opened", b.report("d2", herald.Event{PushID: p.ID, Type: herald.EventOpened, At: b.now}), true)
	b.wantEventCounts(p.ID, 2, 2)
}

func testEventsIgnored(t *testing.T, b *bundle) {
	p, _ := b.sent(2, 10)
	b.register("d9", "t9", "u9") // the app's, but not sent the push
	scheduled := b.acceptScheduled(b.now.Add(time.Hour), "u1")
	other := b.newApp("other")
	home := b.app
	b.app = other
	op, _ := b.sent(1, 10) // other's push to its own d1
	b.app = home

	for _, c := range []struct {
		name, device, push string
	}{
		{"UnknownPush", "d1", "push_0000000000000000000000"},
		{"AnotherAppsPush", "d1", op.ID},
		{"NotSentToDevice", "d9", p.ID},
		{"UnknownDevice", "nobody", p.ID},
		{"NotSentYet", "d1", scheduled.ID},
	} {
		got := b.record(c.device, b.mark(c.push, herald.EventReceived), b.mark(c.push, herald.EventOpened))
		wantBools(t, c.name, got, false, false)
	}
	b.wantEventCounts(p.ID, 0, 0)
	b.wantEventCounts(op.ID, 0, 0)
	b.wantEventCounts(scheduled.ID, 0, 0)
	// The other app's own device counts on its push.
	got, err := b.s.RecordEvents(b.ctx, other.ID, "d1", []herald.EventMark{b.mark(op.ID, herald.EventReceived)})
	must(t, "RecordEvents", err)
	wantBools(t, "other app's device", got, true)
	b.wantEventCounts(op.ID, 1, 0)
}

func testEventsUntimely(t *testing.T, b *bundle) {
	p, _ := b.sent(1, 10)
	ev := func(at time.Time) herald.Event { return herald.Event{PushID: p.ID, Type: herald.EventOpened, At: at} }
	got := b.report("d1", ev(b.now.Add(herald.EventLead+time.Second)), ev(b.now.Add(-herald.EventMaxAge-time.Second)))
	wantBools(t, "too far ahead, too old", got, false, false)
	b.wantEventCounts(p.ID, 0, 0)
	got = b.report("d1", ev(b.now.Add(herald.EventLead)))
	wantBools(t, "5 minutes ahead", got, true)
	b.wantEventCounts(p.ID, 1, 1)
}

func testEventsLaterPage(t *testing.T, b *bundle) {
	p, first, last := b.pagedTopicPush()
	b.start(p.ID, first)
	b.sendAll(p.ID, first.Deliveries)
	wantBools(t, "d1 on the first page", b.record("d1", b.mark(p.ID, herald.EventReceived)), true)
	wantBools(t, "d4 before its page", b.record("d4", b.mark(p.ID, herald.EventReceived)), false)
	b.start(p.ID, last)
	b.sendAll(p.ID, last.Deliveries)
	wantBools(t, "d4 after its page", b.record("d4", b.mark(p.ID, herald.EventReceived)), true)
	b.wantEventCounts(p.ID, 2, 0)
}

func testEventsGroup(t *testing.T, b *bundle) {
	var ids []string
	for i := range 2 {
		n := itoa(i + 1)
		b.register("d"+n, "t"+n, "u"+n)
		p, rs := b.newPush("u" + n)
		p.RequestGroupID = "group-1"
		b.accept(p, rs)
		devices := []herald.Device{}
		d, _ := b.device("d" + n)
		devices = append(devices, d)
		ds := plan(devices, 10)
		b.start(p.ID, fanout(p.ID, ds))
		b.sendAll(p.ID, ds)
		ids = append(ids, p.ID)
		b.tick(time.Millisecond)
	}
	b.record("d1", b.mark(ids[0], herald.EventOpened), b.mark(ids[0], herald.EventReceived))
	b.record("d2", b.mark(ids[1], herald.EventReceived))
	ps, err := b.s.PushGroup(b.ctx, b.app.ID, "group-1")
	must(t, "PushGroup", err)
	var sum herald.Counts
	for _, p := range ps {
		sum.Add(p.Counts)
	}
	if len(ps) != 2 || sum.Received != 2 || sum.Opened != 1 {
		t.Errorf("group: got %d pushes, received %d, opened %d, want 2, 2, 1", len(ps), sum.Received, sum.Opened)
	}
}

// testEventsConcurrent has many devices report at once, each twice: every
// mark is recorded exactly once, and the counts hold them all.
func testEventsConcurrent(t *testing.T, b *bundle) {
	const devices = 24
	p, _ := b.sent(devices, 10)
	var recorded atomic.Int64
	var e errs
	concurrently(devices*2, func(i int) {
		d := "d" + itoa(i%devices+1)
		marks := []herald.EventMark{b.mark(p.ID, herald.EventReceived)}
		if i%devices%2 == 0 {
			marks = append(marks, b.mark(p.ID, herald.EventOpened))
		}
		got, err := b.s.RecordEvents(b.ctx, b.app.ID, d, marks)
		e.add(err)
		for _, r := range got {
			if r {
				recorded.Add(1)
			}
		}
	})
	e.report(t, "RecordEvents")
	if n := recorded.Load(); n != devices+devices/2 {
		t.Errorf("recorded: got %d, want %d", n, devices+devices/2)
	}
	b.wantEventCounts(p.ID, devices, devices/2)
}

// receivedAndOpened is a report of received and opened for the push.
func (b *bundle) receivedAndOpened(pushID string) []herald.EventMark {
	return []herald.EventMark{b.mark(pushID, herald.EventReceived), b.mark(pushID, herald.EventOpened)}
}

// wantReceivedAtMostSent fails unless the push's received count is at
// most its sent count.
func (b *bundle) wantReceivedAtMostSent(pushID string) {
	b.t.Helper()
	c := b.pushOf(pushID).Counts
	if c.Received > c.Sent {
		b.t.Errorf("push counts: received %d > sent %d", c.Received, c.Sent)
	}
}

// testEventsNotSentWaiting: a device whose slot waits for its turn (not
// yet in flight) was sent nothing: its events are ignored.
func testEventsNotSentWaiting(t *testing.T, b *bundle) {
	p, _ := b.sending(2, 10)
	wantBools(t, "d1 waiting", b.record("d1", b.receivedAndOpened(p.ID)...), false, false)
	b.wantEventCounts(p.ID, 0, 0)
}

// testEventsNotSentDeferred: a device waiting for 08:00 was sent nothing;
// the one sent at once counts. Sent in the morning, the deferred device's
// later report counts.
func testEventsNotSentDeferred(t *testing.T, b *bundle) {
	p := b.deferring()
	b.sendChunk(p.ID, 0)
	wantBools(t, "d1 sent at once", b.record("d1", b.mark(p.ID, herald.EventReceived)), true)
	wantBools(t, "d2 deferred", b.record("d2", b.receivedAndOpened(p.ID)...), false, false)
	b.wantEventCounts(p.ID, 1, 0)
	b.wantReceivedAtMostSent(p.ID)

	b.sendChunk(p.ID, 1)
	wantBools(t, "d2 after the morning's send", b.record("d2", b.mark(p.ID, herald.EventReceived)), true)
	b.wantEventCounts(p.ID, 2, 0)
}

// testEventsNotSentCancelled: a device whose deferred part was cancelled
// was sent nothing.
func testEventsNotSentCancelled(t *testing.T, b *bundle) {
	p := b.deferring()
	b.sendChunk(p.ID, 0)
	if _, err := b.cancelDeferred(p.ID); err != nil {
		t.Fatalf("CancelDeferred: %v", err)
	}
	wantBools(t, "d1 sent", b.record("d1", b.mark(p.ID, herald.EventReceived)), true)
	wantBools(t, "d2 cancelled", b.record("d2", b.receivedAndOpened(p.ID)...), false, false)
	wantBools(t, "d3 cancelled", b.record("d3", b.mark(p.ID, herald.EventOpened)), false)
	b.wantEventCounts(p.ID, 1, 0)
	b.wantReceivedAtMostSent(p.ID)
}

// testEventsNotSentFailed: a device whose send failed (its token deleted)
// was sent nothing; the one sent beside it counts.
func testEventsNotSentFailed(t *testing.T, b *bundle) {
	p, ds := b.sending(2, 10)
	b.advance(p.ID, sendstore.ChunkStep{New: rng(0, 2), Targets: slotTargets(0, ds...)}, 2)
	dead := ds[1]
	dead.State, dead.Reason, dead.Attempts = herald.DeliveryUndeliverable, herald.ReasonAppDeleted, 1
	b.advance(p.ID, sendstore.ChunkStep{Old: rng(0, 2), New: rng(2, 2), Rows: []herald.Delivery{dead},
		Drop: []sendstore.DeadToken{{DeviceID: dead.DeviceID, Token: dead.Token}}}, 2)
	wantBools(t, "d1 sent", b.record("d1", b.receivedAndOpened(p.ID)...), true, true)
	wantBools(t, "d2 failed", b.record("d2", b.receivedAndOpened(p.ID)...), false, false)
	b.wantEventCounts(p.ID, 1, 1)
	b.wantReceivedAtMostSent(p.ID)
}

// testEventsInFlightSent: an event reported while the device's send is in
// flight is accepted but not counted; it counts once the send is recorded
// sent, once, and a repeat meanwhile or after is ignored.
func testEventsInFlightSent(t *testing.T, b *bundle) {
	p, ds := b.sending(2, 10)
	b.advance(p.ID, sendstore.ChunkStep{New: rng(0, 2), Targets: slotTargets(0, ds...)}, 2)
	wantBools(t, "d1 in flight", b.record("d1", b.receivedAndOpened(p.ID)...), true, true)
	wantBools(t, "d1 again in flight", b.record("d1", b.receivedAndOpened(p.ID)...), false, false)
	b.wantEventCounts(p.ID, 0, 0)
	b.advance(p.ID, sendstore.ChunkStep{Old: rng(0, 2), New: rng(2, 2)}, 2)
	b.wantEventCounts(p.ID, 1, 1)
	wantBools(t, "d1 after the send", b.record("d1", b.receivedAndOpened(p.ID)...), false, false)
	wantBools(t, "d2 after the send", b.record("d2", b.mark(p.ID, herald.EventReceived)), true)
	b.wantEventCounts(p.ID, 2, 1)
	b.wantReceivedAtMostSent(p.ID)
}

// testEventsInFlightFailed: an event reported while the send is in
// flight is dropped when the send fails.
func testEventsInFlightFailed(t *testing.T, b *bundle) {
	p, ds := b.sending(1, 10)
	b.advance(p.ID, sendstore.ChunkStep{New: rng(0, 1), Targets: slotTargets(0, ds...)}, 1)
	wantBools(t, "d1 in flight", b.record("d1", b.mark(p.ID, herald.EventReceived)), true)
	dead := ds[0]
	dead.State, dead.Reason, dead.Attempts = herald.DeliveryUndeliverable, herald.ReasonAppDeleted, 1
	b.advance(p.ID, sendstore.ChunkStep{Old: rng(0, 1), New: rng(1, 1), Rows: []herald.Delivery{dead}}, 1)
	b.complete(p.ID, 0, true)
	if _, err := b.s.FinishPush(b.ctx, p.ID, nil, nil); err != nil {
		t.Fatalf("FinishPush: %v", err)
	}
	b.wantEventCounts(p.ID, 0, 0)
	wantBools(t, "d1 after the failure", b.record("d1", b.mark(p.ID, herald.EventReceived)), false)
}

// testEventsInFlightRetried: a send in flight settled into a retry chunk
// takes the pending event with it; the retry's send counts it.
func testEventsInFlightRetried(t *testing.T, b *bundle) {
	p, ds := b.sending(1, 10)
	b.advance(p.ID, sendstore.ChunkStep{New: rng(0, 1), Targets: slotTargets(0, ds...)}, 1)
	wantBools(t, "d1 in flight", b.record("d1", b.receivedAndOpened(p.ID)...), true, true)
	again := ds[0]
	again.Resent = true
	b.advance(p.ID, sendstore.ChunkStep{Old: rng(0, 1), New: rng(1, 1), Retry: retryChunk(p.ID, again)}, 1)
	b.wantEventCounts(p.ID, 0, 0)
	wantBools(t, "d1 again, waiting for the resend", b.record("d1", b.receivedAndOpened(p.ID)...), false, false)
	w, err := b.s.ResumeChunk(b.ctx, p.ID, -1)
	must(t, "ResumeChunk", err)
	b.advance(p.ID, sendstore.ChunkStep{Chunk: -1, New: rng(0, 1), Targets: slotTargets(0, w.Slots...)}, 1)
	sent := w.Slots[0]
	sent.State, sent.Attempts = herald.DeliverySent, 1
	b.advance(p.ID, sendstore.ChunkStep{Chunk: -1, Old: rng(0, 1), New: rng(1, 1), Rows: []herald.Delivery{sent}}, 1)
	b.wantEventCounts(p.ID, 1, 1)
}

// testEventsInFlightFinish: a pending event made ready whose promotion
// did not run is counted by the push's finish.
func testEventsInFlightFinish(t *testing.T, b *bundle) {
	p, ds := b.sending(1, 10)
	b.advance(p.ID, sendstore.ChunkStep{New: rng(0, 1), Targets: slotTargets(0, ds...)}, 1)
	wantBools(t, "d1 in flight", b.record("d1", b.mark(p.ID, herald.EventReceived)), true)
	b.advance(p.ID, sendstore.ChunkStep{Old: rng(0, 1), New: rng(1, 1)}, 1)
	b.complete(p.ID, 0, true)
	if _, err := b.s.FinishPush(b.ctx, p.ID, nil, nil); err != nil {
		t.Fatalf("FinishPush: %v", err)
	}
	b.wantEventCounts(p.ID, 1, 0)
}
