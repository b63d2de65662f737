package storetest

import (
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/retention"
	"github.com/heraldpush/herald/sendstore"
)

// retentionTests are the retention.Store cases.
var retentionTests = []test{
	{"ExpireKeepsCounts", testExpireKeepsCounts},
}

// testExpireKeepsCounts: a push finished before the cut-off loses its body
// and then its rows, while its counts, and the totals it is part of, stay
// what they were at every point; a push finished after the cut-off and a
// scheduled one are left whole.
func testExpireKeepsCounts(t *testing.T, b *bundle) {
	now := b.now
	d1, d2, d3 := b.register("d1", "tok1", "u1"), b.register("d2", "tok2", "u2"), b.register("d3", "tok3", "u3")
	send := func(users ...string) herald.Push {
		t.Helper()
		p := b.acceptUsers(users...)
		ds := plan([]herald.Device{d1, d2, d3}, 10)
		b.start(p.ID, fanout(p.ID, ds))
		ds[1].State, ds[1].Error = herald.DeliveryFailed, "INTERNAL"
		ds[2].State, ds[2].Reason, ds[2].Error = herald.DeliveryUndeliverable, herald.ReasonAppDeleted, "UNREGISTERED"
		b.advance(p.ID, sendstore.ChunkStep{New: rng(0, 3), Targets: slotTargets(0, ds...)}, 3)
		b.advance(p.ID, sendstore.ChunkStep{Old: rng(0, 3), New: rng(3, 3), Rows: ds[1:]}, 3)
		finished, err := b.s.FinishPush(b.ctx, p.ID, []herald.Unreachable{{UserID: "ghost", Reason: herald.ReasonNoToken}}, nil)
		if err != nil || !finished {
			t.Fatalf("FinishPush: got (%v, %v), want (true, nil)", finished, err)
		}
		got, err := b.s.Push(b.ctx, p.ID)
		must(t, "Push", err)
		return got
	}
	old := send("u1", "u2", "u3", "ghost")
	b.setNow(now.Add(time.Hour))
	recent := send("u1", "u2", "u3", "ghost")
	scheduled := b.acceptScheduled(now.Add(48*time.Hour), "u1")
	b.setNow(now.Add(2 * time.Hour))
	window := func() herald.PushTotals { return b.totals(now.Add(-time.Hour), now.Add(3*time.Hour)) }
	totals := window()
	if totals.Counts.Sent != 2 || totals.Counts.Unreachable != 2 {
		t.Fatalf("totals before: got %+v, want 2 sent, 2 unreachable", totals.Counts)
	}
	check := func(when string) {
		t.Helper()
		for _, want := range []herald.Push{old, recent} {
			got, err := b.s.Push(b.ctx, want.ID)
			must(t, "Push", err)
			if got.Counts != want.Counts {
				t.Errorf("%s: push %s counts: got %+v, want %+v", when, want.ID, got.Counts, want.Counts)
			}
		}
		if got := window(); got != totals {
			t.Errorf("%s: totals: got %+v, want %+v", when, got, totals)
		}
		if _, sent, received, opened := b.quarterSums(totals.From, totals.To); sent != totals.Counts.Sent ||
			received != totals.Counts.Received || opened != totals.Counts.Opened {
			t.Errorf("%s: quarters add up to sent %d, received %d, opened %d, want the totals' %+v", when, sent, received, opened, totals.Counts)
		}
	}

	st, err := b.s.ExpirePushes(b.ctx, now.Add(30*time.Minute), b.now, 10)
	must(t, "ExpirePushes", err)
	if st.Deleted[retention.RetainedPushes] != 1 || st.More {
		t.Fatalf("ExpirePushes: got %+v, want 1 push expired and no more", st)
	}
	check("expired, rows not yet deleted")
	p, err := b.s.Push(b.ctx, old.ID)
	must(t, "Push", err)
	if p.ExpiredAt == nil || !p.ExpiredAt.Equal(b.now.Truncate(time.Millisecond)) || p.Content != (herald.Content{}) {
		t.Errorf("old push: got expired at %v, content %+v; want expired now, no content", p.ExpiredAt, p.Content)
	}
	for more := true; more; {
		st, err := b.s.PruneExpired(b.ctx, 1)
		must(t, "PruneExpired", err)
		more = st.More
		check("while its rows go")
	}
	if u, err := b.s.UnreachableUsersOf(b.ctx, old.ID); err != nil || len(u) != 0 {
		t.Errorf("old push's unreachable users: got %v (%v), want none", u, err)
	}
	if u, err := b.s.UnreachableUsersOf(b.ctx, recent.ID); err != nil || len(u) != 1 {
		t.Errorf("recent push's unreachable users: got %v (%v), want its one", u, err)
	}
	for _, id := range []string{recent.ID, scheduled.ID} {
		p, err := b.s.Push(b.ctx, id)
		must(t, "Push", err)
		if p.ExpiredAt != nil || p.Content.Title == "" {
			t.Errorf("push %s (%s): got expired at %v, title %q; want it kept", id, p.Status, p.ExpiredAt, p.Content.Title)
		}
	}
	if st, err := b.s.ExpirePushes(b.ctx, b.now.Add(365*24*time.Hour), b.now, 10); err != nil || st.Deleted[retention.RetainedPushes] != 1 {
		t.Errorf("ExpirePushes a year on: got %+v (%v), want the recent push only (the scheduled one is not finished)", st, err)
	}
}
