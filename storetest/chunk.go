package storetest

import (
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// The chunk subtests: a chunk's slots, its cursor and in-flight range.
var chunkTests = []test{
	{"ResumeChunk/Pending", testResumePending},
	{"ResumeChunk/InflightBecomeRows", testResumeInflight},
	{"AdvanceChunk/SettlesAndMarks", testAdvanceSettles},
	{"AdvanceChunk/Moved", testAdvanceMoved},
	{"AdvanceChunk/TokenMovedStopsMark", testAdvanceTokenMoved},
	{"AdvanceChunk/OwnerChangedStopsMark", testAdvanceOwnerChanged},
	{"AdvanceChunk/DropsDeadTokens", testAdvanceDrops},
	{"AdvanceChunk/FailedPushMarksNothing", testAdvanceFailed},
	{"AdvanceChunk/OutOfRange", testAdvanceOutOfRange},
}

// slotTargets returns the send targets of ds at positions from on.
func slotTargets(from int, ds ...herald.Delivery) []sendstore.SlotTarget {
	ts := make([]sendstore.SlotTarget, len(ds))
	for i, d := range ds {
		ts[i] = sendstore.SlotTarget{Pos: from + i, SendTarget: target(d)}
	}
	return ts
}

// states returns the states of a push's deliveries in order of seq.
func (b *bundle) states(pushID string) []herald.DeliveryState {
	b.t.Helper()
	ds, err := b.s.Deliveries(b.ctx, pushID)
	if err != nil {
		b.t.Fatalf("Deliveries: %v", err)
	}
	out := make([]herald.DeliveryState, len(ds))
	for i, d := range ds {
		out[i] = d.State
	}
	return out
}

func testResumePending(t *testing.T, b *bundle) {
	p, ds := b.sending(5, 3)
	w, err := b.s.ResumeChunk(b.ctx, p.ID, 1)
	must(t, "ResumeChunk", err)
	if w.Settled != 0 || len(w.Open) != 0 || len(w.Pending) != 2 {
		t.Fatalf("chunk 1: got %+v, want its two slots pending", w)
	}
	for i, g := range w.Pending {
		want := ds[3+i]
		if g.Seq != want.Seq || g.RecipientIdx != want.RecipientIdx || g.UserID != want.UserID || g.DeviceID != want.DeviceID ||
			g.Token != want.Token || g.Platform != want.Platform || g.AppSourceVersion != want.AppSourceVersion ||
			!g.TokenUpdatedAt.Equal(want.TokenUpdatedAt) || g.Chunk != 1 || g.State != herald.DeliveryPending {
			t.Errorf("slot %d: got %+v, want %+v", i, g, want)
		}
	}
	b.advance(p.ID, sendstore.ChunkStep{Mark: 2}, 2)
	b.advance(p.ID, sendstore.ChunkStep{Marked: 2, Settle: 2}, 2)
	if w, _ := b.s.ResumeChunk(b.ctx, p.ID, 0); w.Settled != 2 || len(w.Pending) != 1 || w.Pending[0].Seq != 2 {
		t.Errorf("chunk 0 after two settled: got %+v, want the third slot pending from 2", w)
	}
	if w, err := b.s.ResumeChunk(b.ctx, p.ID, 7); err != nil || len(w.Pending)+len(w.Open) != 0 {
		t.Errorf("unknown chunk: got (%+v, %v), want nothing", w, err)
	}
}

func testResumeInflight(t *testing.T, b *bundle) {
	p, ds := b.sending(4, 10)
	// A run marked three slots and died before settling any.
	b.advance(p.ID, sendstore.ChunkStep{Mark: 3, Targets: slotTargets(0, ds[:3]...)}, 3)
	w, err := b.s.ResumeChunk(b.ctx, p.ID, 0)
	must(t, "ResumeChunk", err)
	var open []int
	for _, d := range w.Open {
		open = append(open, d.Seq)
		if d.State != herald.DeliveryInflight || d.Token != ds[d.Seq].Token || d.UserID != ds[d.Seq].UserID {
			t.Errorf("open %d: got %+v, want in flight to its token", d.Seq, d)
		}
	}
	if w.Settled != 3 || !slices.Equal(open, []int{0, 1, 2}) || len(w.Pending) != 1 || w.Pending[0].Seq != 3 {
		t.Fatalf("got settled %d, open %v, %d pending; want 3, [0 1 2], the last slot", w.Settled, open, len(w.Pending))
	}
	if again, _ := b.s.ResumeChunk(b.ctx, p.ID, 0); again.Settled != 3 || len(again.Open) != 3 {
		t.Errorf("again: got %+v, want the same three open rows, made once", again)
	}
	// Sent again, each is recorded as resent.
	marked, err := b.s.MarkInflight(b.ctx, b.app.ID, p.ID, []sendstore.SendTarget{target(ds[0]), target(ds[1]), target(ds[2])})
	if err != nil || len(marked) != 3 {
		t.Fatalf("MarkInflight: got (%v, %v), want 3 marked", marked, err)
	}
	must(t, "RecordOutcomes", b.s.RecordOutcomes(b.ctx, b.app.ID, p.ID, []sendstore.Outcome{
		{Seq: 0, State: herald.DeliverySent}, {Seq: 1, State: herald.DeliverySent}, {Seq: 2, State: herald.DeliveryFailed, Error: "x"}}))
	got := b.deliveries(p.ID)
	for seq := range 3 {
		if !got[seq].Resent {
			t.Errorf("delivery %d: got not resent, want resent", seq)
		}
	}
	if got[3].Resent || got[3].State != herald.DeliveryPending {
		t.Errorf("delivery 3: got %s resent %v, want pending, not resent", got[3].State, got[3].Resent)
	}
	if c := b.pushOf(p.ID).Counts; c.Tokens != 4 || c.Sent != 2 || c.Failed != 1 {
		t.Errorf("counts: got %+v, want 4 tokens, 2 sent, 1 failed", c)
	}
}

func testAdvanceSettles(t *testing.T, b *bundle) {
	p, ds := b.sending(5, 10)
	b.advance(p.ID, sendstore.ChunkStep{Mark: 3, Targets: slotTargets(0, ds[:3]...)}, 3)
	if got := b.states(p.ID); !slices.Equal(got, []herald.DeliveryState{"inflight", "inflight", "inflight", "pending", "pending"}) {
		t.Errorf("after marking 3: got %v", got)
	}
	// Seq 0 and 2 came back sent, 1 failed; 3 and 4 are marked in the same
	// write. Seq 2 stays in flight: 1 settles only up to the first gap.
	failed := ds[1]
	failed.State, failed.Error, failed.Attempts = herald.DeliveryFailed, "INTERNAL", 1
	b.advance(p.ID, sendstore.ChunkStep{Marked: 3, Settle: 2, Rows: []herald.Delivery{failed}, Mark: 2,
		Targets: slotTargets(3, ds[3:]...)}, 5)
	got := b.deliveries(p.ID)
	if got[0].State != herald.DeliverySent || got[1].State != herald.DeliveryFailed || got[1].Error != "INTERNAL" ||
		got[2].State != herald.DeliveryInflight || got[3].State != herald.DeliveryInflight {
		t.Errorf("got %v, want sent, failed, then in flight", b.states(p.ID))
	}
	b.advance(p.ID, sendstore.ChunkStep{Settled: 2, Marked: 5, Settle: 5}, 5)
	if c := b.pushOf(p.ID).Counts; c.Tokens != 5 || c.Sent != 4 || c.Failed != 1 {
		t.Errorf("counts: got %+v, want 5 tokens, 4 sent, 1 failed", c)
	}
	if w, _ := b.s.ResumeChunk(b.ctx, p.ID, 0); w.Settled != 5 || len(w.Pending)+len(w.Open) != 0 {
		t.Errorf("ResumeChunk: got %+v, want nothing left", w)
	}
}

func testAdvanceMoved(t *testing.T, b *bundle) {
	p, ds := b.sending(3, 10)
	b.advance(p.ID, sendstore.ChunkStep{Mark: 2}, 2)
	dead := ds[0]
	dead.State, dead.Reason = herald.DeliveryUndeliverable, herald.ReasonAppDeleted
	for name, st := range map[string]sendstore.ChunkStep{
		"stale range":  {Settled: 0, Marked: 0, Mark: 1},
		"stale cursor": {Settled: 1, Marked: 2, Settle: 2},
	} {
		st.Rows = []herald.Delivery{dead}
		st.Drop = []sendstore.Outcome{{DropDevice: true, DeviceID: "d1", Token: "t1"}}
		_, err := b.s.AdvanceChunk(b.ctx, b.app.ID, p.ID, st)
		wantErr(t, name, err, sendstore.ErrChunkMoved)
	}
	if got := b.states(p.ID); !slices.Equal(got, []herald.DeliveryState{"inflight", "inflight", "pending"}) {
		t.Errorf("got %v, want nothing written", got)
	}
	if _, ok := b.device("d1"); !ok {
		t.Errorf("d1 dropped by a step that did not apply")
	}
}

func testAdvanceTokenMoved(t *testing.T, b *bundle) {
	p, ds := b.sending(4, 10)
	b.register("d9", "t3", "u9") // t3 moved to another device since the judge
	// Slot 1 was judged final (not sent); slot 2's token moved: 0 and 1 are
	// marked, 2 and 3 left to be judged again.
	ts := slotTargets(0, ds[0])
	ts = append(ts, slotTargets(2, ds[2], ds[3])...)
	b.advance(p.ID, sendstore.ChunkStep{Mark: 4, Targets: ts}, 2)
	if got := b.states(p.ID); !slices.Equal(got, []herald.DeliveryState{"inflight", "inflight", "pending", "pending"}) {
		t.Errorf("got %v, want the two before the moved token marked", got)
	}
	// Judged again, slot 2 goes nowhere; the rest is marked.
	b.advance(p.ID, sendstore.ChunkStep{Marked: 2, Mark: 2, Targets: slotTargets(3, ds[3])}, 4)
}

func testAdvanceOwnerChanged(t *testing.T, b *bundle) {
	p, ds := b.sending(3, 10)
	_, err := b.s.SetDeviceUser(b.ctx, b.app.ID, "d2", new("u9"))
	must(t, "SetDeviceUser", err)
	b.advance(p.ID, sendstore.ChunkStep{Mark: 3, Targets: slotTargets(0, ds...)}, 1)
	// A topic push's target has no owner: only the token must still hold.
	unowned := slotTargets(1, ds[1:]...)
	for i := range unowned {
		unowned[i].Owner = nil
	}
	b.advance(p.ID, sendstore.ChunkStep{Marked: 1, Mark: 2, Targets: unowned}, 3)
}

func testAdvanceDrops(t *testing.T, b *bundle) {
	p, ds := b.sending(2, 10)
	b.register("d2", "t2-new", "u2") // d2 refreshed its token since the send
	b.advance(p.ID, sendstore.ChunkStep{Mark: 2}, 2)
	dead := []herald.Delivery{ds[0], ds[1]}
	for i := range dead {
		dead[i].State, dead[i].Reason = herald.DeliveryUndeliverable, herald.ReasonAppDeleted
	}
	b.advance(p.ID, sendstore.ChunkStep{Marked: 2, Settle: 2, Rows: dead, Drop: []sendstore.Outcome{
		{DropDevice: true, DeviceID: "d1", Token: "t1"}, {DropDevice: true, DeviceID: "d2", Token: "t2"}}}, 2)
	if _, ok := b.device("d1"); ok {
		t.Errorf("d1 kept, want dropped with its dead token")
	}
	if d, ok := b.device("d2"); !ok || d.Token != "t2-new" {
		t.Errorf("d2: got %+v (found %v), want kept with its new token", d, ok)
	}
	if c := b.pushOf(p.ID).Counts; c.Tokens != 2 || c.Failed != 2 || c.Sent != 0 {
		t.Errorf("counts: got %+v, want 2 tokens, both failed", c)
	}
}

func testAdvanceFailed(t *testing.T, b *bundle) {
	p, _ := b.sending(3, 10)
	b.advance(p.ID, sendstore.ChunkStep{Mark: 1}, 1)
	must(t, "FailPush", b.s.FailPush(b.ctx, p.ID, "invalid_grant", finishJob(p.ID)))
	// The send in flight came back: it is settled; nothing more is marked.
	b.advance(p.ID, sendstore.ChunkStep{Marked: 1, Settle: 1, Mark: 2}, 1)
	if got := b.states(p.ID); !slices.Equal(got, []herald.DeliveryState{"sent", "failed", "failed"}) {
		t.Errorf("got %v, want the one settled sent, the rest failed", got)
	}
}

func testAdvanceOutOfRange(t *testing.T, b *bundle) {
	p, ds := b.sending(2, 10)
	for name, st := range map[string]sendstore.ChunkStep{
		"settle past the range": {Settle: 1},
		"cursor back":           {Settled: 1, Marked: 1, Settle: 0},
		"more targets than":     {Mark: 1, Targets: slotTargets(0, ds...)},
	} {
		if _, err := b.s.AdvanceChunk(b.ctx, b.app.ID, p.ID, st); err == nil || errors.Is(err, sendstore.ErrChunkMoved) {
			t.Errorf("%s: got %v, want an error", name, err)
		}
	}
}

// testConcurrentAdvanceChunk releases runs of one chunk at one step: one
// writes it, the others find the chunk moved on and write nothing.
func testConcurrentAdvanceChunk(t *testing.T, b *bundle) {
	p, ds := b.sending(writers, 2*writers)
	var won, moved atomic.Int32
	var failed errs
	concurrently(writers, func(i int) {
		st := sendstore.ChunkStep{Mark: 1, Targets: slotTargets(0, ds[0])}
		if i%2 == 1 {
			st.Mark, st.Targets = 2, slotTargets(0, ds[0], ds[1])
		}
		_, err := b.s.AdvanceChunk(b.ctx, b.app.ID, p.ID, st)
		switch {
		case err == nil:
			won.Add(1)
		case errors.Is(err, sendstore.ErrChunkMoved):
			moved.Add(1)
		default:
			failed.add(err)
		}
	})
	failed.report(t, "AdvanceChunk")
	if won.Load() != 1 || moved.Load() != writers-1 {
		t.Errorf("got %d written and %d moved, want 1 and %d", won.Load(), moved.Load(), writers-1)
	}
}

// testConcurrentResumeChunk resumes a chunk a crash left in flight from
// several runs at once: its slots become open rows once.
func testConcurrentResumeChunk(t *testing.T, b *bundle) {
	p, _ := b.sending(3, 10)
	b.advance(p.ID, sendstore.ChunkStep{Mark: 2}, 2)
	var failed errs
	concurrently(writers, func(int) {
		w, err := b.s.ResumeChunk(b.ctx, p.ID, 0)
		if err == nil && (w.Settled != 2 || len(w.Open) != 2 || len(w.Pending) != 1) {
			err = errors.New("got another chunk than 2 settled, 2 open, 1 pending")
		}
		failed.add(err)
	})
	failed.report(t, "ResumeChunk")
	if c := b.pushOf(p.ID).Counts; c.Tokens != 3 {
		t.Errorf("tokens: got %d, want 3 (each slot once)", c.Tokens)
	}
}
