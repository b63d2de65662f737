package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// overviewTests are the HistoryStore cases of the overview's totals.
var overviewTests = []test{
	{"PushTotals/Window", testPushTotalsWindow},
	{"PushTotals/RefundDeducted", testPushTotalsRefund},
	{"PushQuarters", testPushQuarters},
}

// quarterSums adds up the app's quarters of from..to.
func (b *bundle) quarterSums(from, to time.Time) (qs []herald.QuarterCounts, sent, received, opened int) {
	b.t.Helper()
	qs, err := b.s.PushQuarters(b.ctx, b.app.ID, from, to)
	must(b.t, "PushQuarters", err)
	for _, q := range qs {
		sent, received, opened = sent+q.Sent, received+q.Received, opened+q.Opened
	}
	return qs, sent, received, opened
}

// testPushQuarters: two pushes created in one quarter of an hour are
// summed in it (3 sent, 2 received, 1 opened, the sends settled by chunk
// and by delivery row), one created in the next quarter has a quarter of
// its own, a quarter without pushes is left out, and neither a push
// before the window nor another app's counts; the quarters add up to the
// window's totals.
func testPushQuarters(t *testing.T, b *bundle) {
	base := b.now.Truncate(time.Hour).Add(-24 * time.Hour)
	b.setNow(base.Add(-time.Minute))
	b.sent(1, 10)
	b.setNow(base.Add(time.Minute))
	first, _ := b.sent(2, 10)
	b.setNow(base.Add(3 * time.Minute))
	d3 := b.register("d3", "t3", "u3")
	second := b.acceptUsers("u3")
	ds := plan([]herald.Device{d3}, 10)
	b.start(second.ID, fanout(second.ID, ds))
	b.advance(second.ID, sendstore.ChunkStep{New: rng(0, 1), Targets: slotTargets(0, ds...)}, 1)
	ds[0].State = herald.DeliverySent
	b.advance(second.ID, sendstore.ChunkStep{Old: rng(0, 1), New: rng(1, 1), Rows: ds}, 1)
	wantBools(t, "d1 received and opened", b.record("d1", b.mark(first.ID, herald.EventReceived), b.mark(first.ID, herald.EventOpened)), true, true)
	wantBools(t, "d3 received", b.record("d3", b.mark(second.ID, herald.EventReceived)), true)
	b.setNow(base.Add(50 * time.Minute))
	b.acceptUsers("u1")
	other := b.newApp("other")
	p, rs := b.newPush("u1")
	p.AppID = other.ID
	b.charge(&p, len(rs))
	_, _, err := b.s.AcceptPush(b.ctx, p, rs, nil, fanoutJob(p.ID))
	must(t, "AcceptPush other app", err)
	b.setNow(base.Add(time.Hour))

	from, to := base, b.now
	qs, sent, received, opened := b.quarterSums(from, to)
	want := []herald.QuarterCounts{{Start: base.UTC(), Sent: 3, Received: 2, Opened: 1}, {Start: base.Add(45 * time.Minute).UTC()}}
	if !slices.Equal(qs, want) {
		t.Errorf("quarters: got %+v, want %+v", qs, want)
	}
	c := b.totals(from, to).Counts
	if sent != c.Sent || received != c.Received || opened != c.Opened {
		t.Errorf("quarters add up to sent %d, received %d, opened %d; the totals are %+v", sent, received, opened, c)
	}
	if qs, _, _, _ := b.quarterSums(to.Add(time.Millisecond), to.Add(time.Hour)); len(qs) != 0 {
		t.Errorf("an empty window: got %+v, want no quarter", qs)
	}
}

// totals returns the app's totals of from..to.
func (b *bundle) totals(from, to time.Time) herald.PushTotals {
	b.t.Helper()
	t, err := b.s.PushTotals(b.ctx, b.app.ID, from, to)
	must(b.t, "PushTotals", err)
	return t
}

// testPushTotalsWindow sums a sent push (1 sent, 2 failed, 1 unreachable)
// and a waiting one made in the last 7 days; a push 8 days old counts in
// 30 days only, another app's never; and the totals are the sums of each
// push's own counts.
func testPushTotalsWindow(t *testing.T, b *bundle) {
	now := b.now
	b.setNow(now.Add(-8 * 24 * time.Hour))
	old := b.acceptUsers("u1", "u2", "u3", "u4")
	b.setNow(now.Add(-2 * 24 * time.Hour))
	d1, d2, d3 := b.register("d1", "tok1", "u1"), b.register("d2", "tok2", "u2"), b.register("d3", "tok3", "u3")
	sent := b.acceptUsers("u1", "u2", "u3", "ghost")
	ds := plan([]herald.Device{d1, d2, d3}, 10)
	b.start(sent.ID, fanout(sent.ID, ds))
	ds[1].State, ds[1].Error = herald.DeliveryFailed, "INTERNAL"
	ds[2].State, ds[2].Reason, ds[2].Error = herald.DeliveryUndeliverable, herald.ReasonAppDeleted, "UNREGISTERED"
	b.advance(sent.ID, sendstore.ChunkStep{New: rng(0, 3), Targets: slotTargets(0, ds...)}, 3)
	b.advance(sent.ID, sendstore.ChunkStep{Old: rng(0, 3), New: rng(3, 3), Rows: ds[1:]}, 3)
	finished, err := b.s.FinishPush(b.ctx, sent.ID, []herald.Unreachable{{UserID: "ghost", Reason: herald.ReasonNoToken}}, nil)
	if err != nil || !finished {
		t.Fatalf("FinishPush: got (%v, %v), want (true, nil)", finished, err)
	}
	b.setNow(now.Add(-time.Minute))
	waiting := b.acceptUsers("u1", "u2")
	other := b.newApp("other")
	p, rs := b.newPush("u1")
	p.AppID = other.ID
	b.charge(&p, len(rs))
	_, _, err = b.s.AcceptPush(b.ctx, p, rs, nil, fanoutJob(p.ID))
	must(t, "AcceptPush other app", err)
	b.setNow(now)

	week := b.totals(now.Add(-7*24*time.Hour), now)
	want := herald.PushTotals{From: now.Add(-7 * 24 * time.Hour), To: now, Pushes: 2, ServerActionsHalf: 6}
	for _, id := range []string{sent.ID, waiting.ID} {
		got, err := b.s.Push(b.ctx, id)
		must(t, "Push", err)
		want.Counts.Add(got.Counts)
	}
	if week != want {
		t.Errorf("7 days: got %+v, want %+v (the sums of each push's counts)", week, want)
	}
	c := week.Counts
	if c.RequestedUsers != 6 || c.Sent != 1 || c.Failed != 2 || c.Unreachable != 1 || c.Tokens != 3 {
		t.Errorf("7 days: got %+v, want 6 requested users, 1 sent, 2 failed, 1 unreachable, 3 tokens (the waiting push has none yet)", c)
	}
	month := b.totals(now.Add(-30*24*time.Hour), now)
	if month.Pushes != 3 || month.Counts.RequestedUsers != 10 || month.ServerActionsHalf != 10 || month.Counts.Sent != 1 {
		t.Errorf("30 days: got %+v, want 3 pushes, 10 users, 10 half Server Actions, 1 sent (with %s)", month, old.ID)
	}
	if none := b.totals(now.Add(time.Millisecond), now.Add(time.Hour)); none.Pushes != 0 || none.Counts != (herald.Counts{}) || none.ServerActionsHalf != 0 {
		t.Errorf("an empty window: got %+v, want zeros", none)
	}
}

// testPushTotalsRefund: a cancelled scheduled push counts as a push, its
// charge refunded.
func testPushTotalsRefund(t *testing.T, b *bundle) {
	p, rs := b.newPush("u1", "u2", "u3")
	at := b.now.Add(time.Hour)
	p.Status, p.ScheduledAt = herald.StatusScheduled, &at
	b.accept(p, rs)
	b.acceptUsers("u1")
	_, err := b.cancel(p.ID)
	must(t, "CancelScheduled", err)
	got := b.totals(b.now.Add(-time.Hour), b.now.Add(time.Millisecond))
	if got.Pushes != 2 || got.Counts.RequestedUsers != 4 || got.ServerActionsHalf != 1 {
		t.Errorf("got %+v, want 2 pushes, 4 requested users, 1 half Server Action (the cancelled push's 3 refunded)", got)
	}
}
