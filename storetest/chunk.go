package storetest

import (
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// The chunk subtests: a chunk's slots, its range, and retry chunks.
var chunkTests = []test{
	{"ResumeChunk/Pending", testResumePending},
	{"ResumeChunk/InFlightReportedNotWritten", testResumeInflight},
	{"AdvanceChunk/SettlesAndMarks", testAdvanceSettles},
	{"AdvanceChunk/Moved", testAdvanceMoved},
	{"AdvanceChunk/TokenMovedStopsMark", testAdvanceTokenMoved},
	{"AdvanceChunk/OwnerChangedStopsMark", testAdvanceOwnerChanged},
	{"AdvanceChunk/DropsDeadTokens", testAdvanceDrops},
	{"AdvanceChunk/FailedPushMarksNothing", testAdvanceFailed},
	{"AdvanceChunk/OutOfRange", testAdvanceOutOfRange},
	{"AdvanceChunk/RetryChunk", testAdvanceRetry},
	{"AdvanceChunk/RetryChunkOfFailedPush", testAdvanceRetryFailed},
	{"AdvanceChunk/InFlightResentOnce", testAdvanceResent},
}

// rng is a chunk's range: its cursor and in-flight end.
func rng(settled, marked int) sendstore.Range {
	return sendstore.Range{Settled: settled, Marked: marked}
}

// step is a step of chunk 0 from one range to another.
func step(from, to sendstore.Range) sendstore.ChunkStep {
	return sendstore.ChunkStep{Old: from, New: to}
}

// target is the send target of slot d at position pos, as planned.
func target(pos int, d herald.Delivery) sendstore.SlotTarget {
	return sendstore.SlotTarget{Pos: pos, DeviceID: d.DeviceID, Token: d.Token, Owner: &d.UserID}
}

// slotTargets returns the send targets of ds at positions from on.
func slotTargets(from int, ds ...herald.Delivery) []sendstore.SlotTarget {
	ts := make([]sendstore.SlotTarget, len(ds))
	for i, d := range ds {
		ts[i] = target(from+i, d)
	}
	return ts
}

// retryChunk is a retry chunk of ds whose job is sendJob.
func retryChunk(pushID string, ds ...herald.Delivery) *sendstore.RetryChunk {
	return &sendstore.RetryChunk{Slots: ds, Job: retryJob(pushID)}
}

// retryJob is the job of a push's retry chunk before it is numbered.
type retryJob string

func (j retryJob) ForChunk(chunk int) herald.Job { return sendJob(string(j), chunk) }

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

// resume returns a chunk's work, failing the test on an error.
func (b *bundle) resume(pushID string, chunk int) sendstore.ChunkWork {
	b.t.Helper()
	w, err := b.s.ResumeChunk(b.ctx, pushID, chunk)
	if err != nil {
		b.t.Fatalf("ResumeChunk %d: %v", chunk, err)
	}
	return w
}

func testResumePending(t *testing.T, b *bundle) {
	p, ds := b.sending(5, 3)
	w := b.resume(p.ID, 1)
	if w.Range != rng(0, 0) || w.Stopped || len(w.Slots) != 2 {
		t.Fatalf("chunk 1: got %+v, want its two slots pending", w)
	}
	for i, g := range w.Slots {
		want := ds[3+i]
		if g.Seq != want.Seq || g.RecipientIdx != want.RecipientIdx || g.UserID != want.UserID || g.DeviceID != want.DeviceID ||
			g.Token != want.Token || g.Platform != want.Platform || g.AppSourceVersion != want.AppSourceVersion ||
			!g.TokenUpdatedAt.Equal(want.TokenUpdatedAt) || g.Chunk != 1 || g.State != herald.DeliveryPending {
			t.Errorf("slot %d: got %+v, want %+v", i, g, want)
		}
	}
	b.advance(p.ID, step(rng(0, 0), rng(0, 2)), 2)
	b.advance(p.ID, step(rng(0, 2), rng(2, 2)), 2)
	if w := b.resume(p.ID, 0); w.Range != rng(2, 2) || len(w.Slots) != 1 || w.Slots[0].Seq != 2 {
		t.Errorf("chunk 0 after two settled: got %+v, want the third slot pending from 2", w)
	}
	if w := b.resume(p.ID, 7); len(w.Slots) != 0 {
		t.Errorf("unknown chunk: got %+v, want nothing", w)
	}
}

// testResumeInflight: a run marked three slots and died. The next run is
// told which slots were in flight; reading the chunk writes nothing.
func testResumeInflight(t *testing.T, b *bundle) {
	p, ds := b.sending(4, 10)
	b.advance(p.ID, sendstore.ChunkStep{New: rng(0, 3), Targets: slotTargets(0, ds[:3]...)}, 3)
	for range 2 {
		w := b.resume(p.ID, 0)
		if w.Range != rng(0, 3) || len(w.Slots) != 4 || w.Slots[0].Seq != 0 {
			t.Fatalf("got %+v, want 3 of 4 slots in flight from 0", w)
		}
	}
	if got := b.states(p.ID); !slices.Equal(got, []herald.DeliveryState{"inflight", "inflight", "inflight", "pending"}) {
		t.Errorf("got %v, want the three still in flight", got)
	}
}

func testAdvanceSettles(t *testing.T, b *bundle) {
	p, ds := b.sending(5, 10)
	b.advance(p.ID, sendstore.ChunkStep{New: rng(0, 3), Targets: slotTargets(0, ds[:3]...)}, 3)
	if got := b.states(p.ID); !slices.Equal(got, []herald.DeliveryState{"inflight", "inflight", "inflight", "pending", "pending"}) {
		t.Errorf("after marking 3: got %v", got)
	}
	// Seq 0 and 2 came back sent, 1 failed; 3 and 4 are marked in the same
	// write. Seq 2 stays in flight: 1 settles only up to the first gap.
	failed := ds[1]
	failed.State, failed.Error, failed.Attempts = herald.DeliveryFailed, "INTERNAL", 1
	b.advance(p.ID, sendstore.ChunkStep{Old: rng(0, 3), New: rng(2, 5), Rows: []herald.Delivery{failed},
		Targets: slotTargets(3, ds[3:]...)}, 5)
	got := b.deliveries(p.ID)
	if got[0].State != herald.DeliverySent || got[1].State != herald.DeliveryFailed || got[1].Error != "INTERNAL" ||
		got[2].State != herald.DeliveryInflight || got[3].State != herald.DeliveryInflight {
		t.Errorf("got %v, want sent, failed, then in flight", b.states(p.ID))
	}
	b.advance(p.ID, step(rng(2, 5), rng(5, 5)), 5)
	if c := b.pushOf(p.ID).Counts; c.Tokens != 5 || c.Sent != 4 || c.Failed != 1 {
		t.Errorf("counts: got %+v, want 5 tokens, 4 sent, 1 failed", c)
	}
	if w := b.resume(p.ID, 0); w.Range != rng(5, 5) || len(w.Slots) != 0 {
		t.Errorf("ResumeChunk: got %+v, want nothing left", w)
	}
}

func testAdvanceMoved(t *testing.T, b *bundle) {
	p, ds := b.sending(3, 10)
	b.advance(p.ID, step(rng(0, 0), rng(0, 2)), 2)
	dead := ds[0]
	dead.State, dead.Reason = herald.DeliveryUndeliverable, herald.ReasonAppDeleted
	for name, st := range map[string]sendstore.ChunkStep{
		"stale range":  step(rng(0, 1), rng(1, 1)),
		"stale cursor": step(rng(1, 2), rng(2, 2)),
	} {
		st.Rows = []herald.Delivery{dead}
		st.Drop = []sendstore.DeadToken{{DeviceID: "d1", Token: "t1"}}
		st.Retry = retryChunk(p.ID)
		_, _, err := b.s.AdvanceChunk(b.ctx, b.app.ID, p.ID, st)
		wantErr(t, name, err, sendstore.ErrChunkMoved)
	}
	if got := b.states(p.ID); !slices.Equal(got, []herald.DeliveryState{"inflight", "inflight", "pending"}) {
		t.Errorf("got %v, want nothing written", got)
	}
	if _, ok := b.device("d1"); !ok {
		t.Errorf("d1 dropped by a step that did not apply")
	}
	b.wantJobs(sendJob(p.ID, -1).Kind(), 0)
}

func testAdvanceTokenMoved(t *testing.T, b *bundle) {
	p, ds := b.sending(4, 10)
	b.register("d9", "t3", "u9") // t3 moved to another device since the judge
	// Slot 1 was judged final (not sent); slot 2's token moved: 0 and 1 are
	// marked, 2 and 3 left to be judged again.
	ts := slotTargets(0, ds[0])
	ts = append(ts, slotTargets(2, ds[2], ds[3])...)
	b.advance(p.ID, sendstore.ChunkStep{New: rng(0, 4), Targets: ts}, 2)
	if got := b.states(p.ID); !slices.Equal(got, []herald.DeliveryState{"inflight", "inflight", "pending", "pending"}) {
		t.Errorf("got %v, want the two before the moved token marked", got)
	}
	// Judged again, slot 2 goes nowhere; the rest is marked.
	b.advance(p.ID, sendstore.ChunkStep{Old: rng(0, 2), New: rng(0, 4), Targets: slotTargets(3, ds[3])}, 4)
}

func testAdvanceOwnerChanged(t *testing.T, b *bundle) {
	p, ds := b.sending(3, 10)
	_, err := b.s.SetDeviceUser(b.ctx, b.app.ID, "d2", new("u9"))
	must(t, "SetDeviceUser", err)
	b.advance(p.ID, sendstore.ChunkStep{New: rng(0, 3), Targets: slotTargets(0, ds...)}, 1)
	// A topic push's target has no owner: only the token must still hold.
	unowned := slotTargets(1, ds[1:]...)
	for i := range unowned {
		unowned[i].Owner = nil
	}
	b.advance(p.ID, sendstore.ChunkStep{Old: rng(0, 1), New: rng(0, 3), Targets: unowned}, 3)
}

func testAdvanceDrops(t *testing.T, b *bundle) {
	p, ds := b.sending(2, 10)
	b.register("d2", "t2-new", "u2") // d2 refreshed its token since the send
	b.advance(p.ID, step(rng(0, 0), rng(0, 2)), 2)
	dead := []herald.Delivery{ds[0], ds[1]}
	for i := range dead {
		dead[i].State, dead[i].Reason = herald.DeliveryUndeliverable, herald.ReasonAppDeleted
	}
	b.advance(p.ID, sendstore.ChunkStep{Old: rng(0, 2), New: rng(2, 2), Rows: dead, Drop: []sendstore.DeadToken{
		{DeviceID: "d1", Token: "t1"}, {DeviceID: "d2", Token: "t2"}}}, 2)
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
	b.advance(p.ID, step(rng(0, 0), rng(0, 1)), 1)
	must(t, "FailPush", b.s.FailPush(b.ctx, p.ID, "invalid_grant", finishJob(p.ID)))
	// The send in flight came back: it is settled; nothing more is marked,
	// and the step says the push stopped.
	marked, stopped, err := b.s.AdvanceChunk(b.ctx, b.app.ID, p.ID, step(rng(0, 1), rng(1, 3)))
	if err != nil || marked != 1 || !stopped {
		t.Errorf("AdvanceChunk: got (%d, %v, %v), want (1, true, nil)", marked, stopped, err)
	}
	if got := b.states(p.ID); !slices.Equal(got, []herald.DeliveryState{"sent", "failed", "failed"}) {
		t.Errorf("got %v, want the one settled sent, the rest failed", got)
	}
	if w := b.resume(p.ID, 0); !w.Stopped || len(w.Slots) != 0 {
		t.Errorf("ResumeChunk: got %+v, want stopped, nothing to send", w)
	}
}

func testAdvanceOutOfRange(t *testing.T, b *bundle) {
	p, ds := b.sending(2, 10)
	for name, st := range map[string]sendstore.ChunkStep{
		"settle past the range": step(rng(0, 0), rng(1, 1)),
		"cursor back":           step(rng(1, 1), rng(0, 1)),
		"range back":            step(rng(0, 2), rng(0, 1)),
		"more targets than":     {New: rng(0, 1), Targets: slotTargets(0, ds...)},
		"more rows than":        {Old: rng(0, 1), New: rng(1, 1), Rows: ds},
	} {
		if _, _, err := b.s.AdvanceChunk(b.ctx, b.app.ID, p.ID, st); err == nil || errors.Is(err, sendstore.ErrChunkMoved) {
			t.Errorf("%s: got %v, want an error", name, err)
		}
	}
}

// testAdvanceRetry: a step settles one slot sent, one failed and one to
// retry: the last becomes a retry chunk, numbered below the fan-out's, with
// its job; the push waits for it before its finish.
func testAdvanceRetry(t *testing.T, b *bundle) {
	p, ds := b.sending(4, 10)
	b.advance(p.ID, sendstore.ChunkStep{New: rng(0, 3), Targets: slotTargets(0, ds[:3]...)}, 3)
	b.register("d3", "t3-now", "u3") // refreshed since the fan-out
	failed, retry := ds[1], ds[2]
	failed.State, failed.Error = herald.DeliveryFailed, "INVALID_ARGUMENT"
	retry.Token, retry.Attempts, retry.Error = "t3-now", 1, "UNAVAILABLE"
	b.advance(p.ID, sendstore.ChunkStep{Old: rng(0, 3), New: rng(3, 3), Rows: []herald.Delivery{failed},
		Retry: retryChunk(p.ID, retry)}, 3)
	b.wantJobs(sendJob(p.ID, -1).Kind(), 1)
	w := b.resume(p.ID, -1)
	if len(w.Slots) != 1 || w.Slots[0].Seq != 2 || w.Slots[0].Token != "t3-now" || w.Slots[0].Attempts != 1 || w.Slots[0].Chunk != -1 {
		t.Fatalf("retry chunk: got %+v, want seq 2 to t3-now after 1 attempt", w)
	}
	if got := b.states(p.ID); !slices.Equal(got, []herald.DeliveryState{"sent", "failed", "pending", "pending"}) {
		t.Errorf("got %v, want sent, failed, the retry pending, the last pending", got)
	}
	if c := b.pushOf(p.ID).Counts; c.Tokens != 4 || c.Sent != 1 || c.Failed != 1 {
		t.Errorf("counts: got %+v, want 4 tokens (each once), 1 sent, 1 failed", c)
	}
	finish := finishJob(p.ID)
	b.advance(p.ID, step(rng(3, 3), rng(3, 4)), 4)
	b.advance(p.ID, step(rng(3, 4), rng(4, 4)), 4)
	b.complete(p.ID, 0, false)
	b.wantJobs(finish.Kind(), 0)
	// The retry is sent.
	b.advance(p.ID, sendstore.ChunkStep{Chunk: -1, New: rng(0, 1), Targets: slotTargets(0, w.Slots[0])}, 1)
	b.advance(p.ID, sendstore.ChunkStep{Chunk: -1, Old: rng(0, 1), New: rng(1, 1)}, 1)
	b.complete(p.ID, -1, true)
	b.wantJobs(finish.Kind(), 0) // the caller finishes it
	got := b.deliveries(p.ID)
	if got[2].State != herald.DeliverySent || got[2].Token != "t3-now" || got[2].Attempts != 2 || got[2].Resent {
		t.Errorf("delivery 2: got %+v, want sent to t3-now at the second attempt, not resent", got[2])
	}
	if c := b.pushOf(p.ID).Counts; c.Tokens != 4 || c.Sent != 3 || c.Failed != 1 {
		t.Errorf("counts: got %+v, want 4 tokens, 3 sent, 1 failed", c)
	}
}

// testAdvanceRetryFailed: the push failed before the step: its retries are
// recorded failed with their last error, and no retry chunk is made.
func testAdvanceRetryFailed(t *testing.T, b *bundle) {
	p, ds := b.sending(2, 10)
	b.advance(p.ID, step(rng(0, 0), rng(0, 2)), 2)
	must(t, "FailPush", b.s.FailPush(b.ctx, p.ID, "invalid_grant", finishJob(p.ID)))
	retry := ds[0]
	retry.Error = "UNAVAILABLE"
	_, stopped, err := b.s.AdvanceChunk(b.ctx, b.app.ID, p.ID, sendstore.ChunkStep{Old: rng(0, 2), New: rng(1, 2),
		Retry: retryChunk(p.ID, retry)})
	if err != nil || !stopped {
		t.Fatalf("AdvanceChunk: got (%v, %v), want stopped", stopped, err)
	}
	b.wantJobs(sendJob(p.ID, -1).Kind(), 0)
	got := b.deliveries(p.ID)
	if got[0].State != herald.DeliveryFailed || got[0].Error != "UNAVAILABLE" || got[1].Error != "invalid_grant" {
		t.Errorf("got %+v, want the retry failed with its error, the other with the push's reason", got)
	}
	if c := b.pushOf(p.ID).Counts; c.Tokens != 2 || c.Failed != 2 {
		t.Errorf("counts: got %+v, want 2 tokens, 2 failed", c)
	}
}

// testAdvanceResent: a run died with three slots in flight. The next run
// settles them into a retry chunk, resent; sent again, each is recorded as
// resent, and counted once.
func testAdvanceResent(t *testing.T, b *bundle) {
	p, ds := b.sending(4, 10)
	b.advance(p.ID, sendstore.ChunkStep{New: rng(0, 3), Targets: slotTargets(0, ds[:3]...)}, 3)
	w := b.resume(p.ID, 0)
	resent := slices.Clone(w.Slots[:3])
	for i := range resent {
		resent[i].Resent = true
	}
	b.advance(p.ID, sendstore.ChunkStep{Old: w.Range, New: rng(3, 3), Retry: retryChunk(p.ID, resent...)}, 3)
	r := b.resume(p.ID, -1)
	if len(r.Slots) != 3 || !r.Slots[0].Resent || r.Slots[0].Attempts != 0 {
		t.Fatalf("retry chunk: got %+v, want the three, resent, no attempt failed", r)
	}
	b.advance(p.ID, sendstore.ChunkStep{Chunk: -1, New: rng(0, 3), Targets: slotTargets(0, r.Slots...)}, 3)
	rows := slices.Clone(r.Slots)
	rows[0].State, rows[1].State, rows[2].State, rows[2].Error = herald.DeliverySent, herald.DeliverySent, herald.DeliveryFailed, "x"
	b.advance(p.ID, sendstore.ChunkStep{Chunk: -1, Old: rng(0, 3), New: rng(3, 3), Rows: rows}, 3)
	got := b.deliveries(p.ID)
	for seq := range 3 {
		if !got[seq].Resent {
			t.Errorf("delivery %d: got not resent, want resent", seq)
		}
	}
	if got[0].State != herald.DeliverySent || got[2].State != herald.DeliveryFailed {
		t.Errorf("got %v, want sent, sent, failed, pending", b.states(p.ID))
	}
	if got[3].Resent || got[3].State != herald.DeliveryPending {
		t.Errorf("delivery 3: got %s resent %v, want pending, not resent", got[3].State, got[3].Resent)
	}
	if c := b.pushOf(p.ID).Counts; c.Tokens != 4 || c.Sent != 2 || c.Failed != 1 {
		t.Errorf("counts: got %+v, want 4 tokens, 2 sent, 1 failed", c)
	}
}

// testConcurrentAdvanceChunk releases runs of one chunk at one step: one
// writes it, the others find the chunk moved on and write nothing.
func testConcurrentAdvanceChunk(t *testing.T, b *bundle) {
	p, ds := b.sending(writers, 2*writers)
	var won, moved atomic.Int32
	var failed errs
	concurrently(writers, func(i int) {
		st := sendstore.ChunkStep{New: rng(0, 1), Targets: slotTargets(0, ds[0])}
		if i%2 == 1 {
			st.New, st.Targets = rng(0, 2), slotTargets(0, ds[0], ds[1])
		}
		_, _, err := b.s.AdvanceChunk(b.ctx, b.app.ID, p.ID, st)
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
// several runs at once, each settling the slots in flight into a retry
// chunk: exactly one does, and each slot is counted once.
func testConcurrentResumeChunk(t *testing.T, b *bundle) {
	p, _ := b.sending(3, 10)
	b.advance(p.ID, step(rng(0, 0), rng(0, 2)), 2)
	var won atomic.Int32
	var failed errs
	concurrently(writers, func(int) {
		w, err := b.s.ResumeChunk(b.ctx, p.ID, 0)
		switch {
		case err != nil:
		case w.Range == rng(2, 2) && len(w.Slots) == 1:
			return // another run recovered them before this one read the chunk
		case w.Range != rng(0, 2) || len(w.Slots) != 3:
			err = errors.New("got another chunk than 2 of 3 slots in flight")
		}
		if err == nil {
			_, _, err = b.s.AdvanceChunk(b.ctx, b.app.ID, p.ID, sendstore.ChunkStep{Old: w.Range, New: rng(2, 2),
				Retry: retryChunk(p.ID, w.Slots[:2]...)})
		}
		switch {
		case err == nil:
			won.Add(1)
		case !errors.Is(err, sendstore.ErrChunkMoved):
			failed.add(err)
		}
	})
	failed.report(t, "ResumeChunk")
	if won.Load() != 1 {
		t.Errorf("recoveries: got %d, want 1", won.Load())
	}
	b.wantJobs(sendJob(p.ID, -1).Kind(), 1)
	if c := b.pushOf(p.ID).Counts; c.Tokens != 3 {
		t.Errorf("tokens: got %d, want 3 (each slot once)", c.Tokens)
	}
}
