package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

var scheduleTests = []test{
	{"EditScheduled/MovesJob", testEditMoves},
	{"EditScheduled/ContentKeepsJob", testEditKeepsJob},
	{"EditScheduled/FiveMinuteBoundary", testEditBoundary},
	{"EditScheduled/ErrorStoresNothing", testEditError},
	{"EditScheduled/ErrNotFound", testEditNotFound},
	{"EditScheduled/AdFooter", testEditAdFooter},
	{"CancelScheduled/RefundsAndCancelsJob", testCancel},
	{"CancelScheduled/FiveMinuteBoundary", testCancelBoundary},
	{"CancelScheduled/OnceRefundedOnce", testCancelTwice},
	{"CancelScheduled/RefundNextDay", testCancelNextDay},
	{"CancelScheduled/ErrNotFound", testCancelNotFound},
	{"DueWork/ScheduledSoonestFirst", testDueScheduled},
	{"DueWork/StalledFanout", testDueStalledFanout},
	{"DueWork/DeferredChunk", testDueDeferredChunk},
}

// editWith is the edit the delivery service makes: c applied at now, a new
// edit asks the store for the delivery service's edit of a scheduled
// push at the bundle's time, with the fan-out job a moved time inserts.
func (b *bundle) edit(pushID string, c herald.PushChange) (herald.Push, error) {
	p, _, err := b.s.StepPush(b.ctx, pushID, herald.PushStep{Kind: herald.StepEdit, At: b.now, Change: c, Job: fanoutJob(pushID)})
	return p, err
}

// cancel asks the store for the delivery service's cancel of a push at
// the bundle's time.
func (b *bundle) cancel(pushID string) (herald.Push, error) {
	p, _, err := b.s.StepPush(b.ctx, pushID, herald.PushStep{Kind: herald.StepCancel, At: b.now, Job: finishJob(pushID)})
	return p, err
}

// release asks the store to release a held push with jobs.
func (b *bundle) release(pushID string, jobs []herald.Job) (herald.Push, error) {
	p, _, err := b.s.StepPush(b.ctx, pushID, herald.PushStep{Kind: herald.StepRelease, At: b.now, Jobs: jobs})
	return p, err
}

// sendAt is a send time an hour after epoch, on the minute.
var sendAt = epoch.Add(time.Hour).Truncate(time.Minute)

func testEditMoves(t *testing.T, b *bundle) {
	p := b.acceptScheduled(sendAt, "u1")
	moved := sendAt.Add(time.Hour)
	got, err := b.edit(p.ID, herald.PushChange{Title: new("new title"), ScheduledAt: &moved})
	if err != nil || got.Content.Title != "new title" || !got.ScheduledAt.Equal(moved) {
		t.Fatalf("got (%+v, %v), want the edited push", got, err)
	}
	rec := b.pushOf(p.ID)
	if rec.Content.Title != "new title" || !rec.ScheduledAt.Equal(moved) || rec.Status != herald.StatusScheduled || len(rec.Edits) != 1 {
		t.Errorf("stored: got %+v, want the new title and time, one edit in the trail", rec)
	}
	if states := b.jobs(fanoutJob(p.ID).Kind()); len(states) != 2 || states[0] != "cancelled" || states[1] == "cancelled" {
		t.Errorf("jobs: got %v, want the old one cancelled and a new one", states)
	}
	// The next edit is judged on the stored push, trail included.
	got, err = b.edit(p.ID, herald.PushChange{Content: new("new content")})
	if err == nil && (got.Content.Title != "new title" || len(got.Edits) != 2) {
		t.Errorf("second edit: got %+v, want it applied to the stored push", got)
	}
	must(t, "second edit", err)
	if rec := b.pushOf(p.ID); len(rec.Edits) != 2 || rec.Content.Content != "new content" {
		t.Errorf("after a second edit: got %+v, want two edits", rec)
	}
}

func testEditKeepsJob(t *testing.T, b *bundle) {
	p := b.acceptScheduled(sendAt, "u1")
	_, err := b.edit(p.ID, herald.PushChange{Title: new("(광고) sale"), Badge: new(true)})
	must(t, "EditScheduled", err)
	rec := b.pushOf(p.ID)
	if rec.Content.Title != "(광고) sale" || !rec.Badge || !rec.Marketing || !rec.ScheduledAt.Equal(sendAt) {
		t.Errorf("got %+v, want the new title, badge, marketing, same time", rec)
	}
	if states := b.jobs(fanoutJob(p.ID).Kind()); len(states) != 1 || states[0] == "cancelled" {
		t.Errorf("jobs: got %v, want the one job kept", states)
	}
}

func testEditBoundary(t *testing.T, b *bundle) {
	p := b.acceptScheduled(sendAt, "u1")
	b.setNow(sendAt.Add(-herald.EditDeadline))
	if _, err := b.edit(p.ID, herald.PushChange{Title: new("at 5 min")}); err != nil {
		t.Errorf("exactly 5 minutes before: got %v, want nil", err)
	}
	b.tick(time.Millisecond)
	_, err := b.edit(p.ID, herald.PushChange{Title: new("too late")})
	wantErr(t, "under 5 minutes before", err, herald.ErrScheduleLocked)
	if rec := b.pushOf(p.ID); rec.Content.Title != "at 5 min" || len(rec.Edits) != 1 {
		t.Errorf("got %+v, want the edit at 5 minutes only", rec)
	}
}

func testEditError(t *testing.T, b *bundle) {
	p := b.acceptScheduled(sendAt, "u1")
	moved := sendAt.Add(time.Hour)
	// A title the FCM payload cannot carry: the edit is refused whole.
	_, err := b.edit(p.ID, herald.PushChange{Title: new(strings.Repeat("x", herald.MaxFCMPayload)), ScheduledAt: &moved})
	wantErr(t, "edit's error", err, herald.ErrInvalidRequest)
	if rec := b.pushOf(p.ID); rec.Content.Title != "title" || !rec.ScheduledAt.Equal(sendAt) || len(rec.Edits) != 0 {
		t.Errorf("got %+v, want the push unchanged", rec)
	}
	if states := b.jobs(fanoutJob(p.ID).Kind()); len(states) != 1 || states[0] == "cancelled" {
		t.Errorf("jobs: got %v, want the one job kept", states)
	}
}

func testEditNotFound(t *testing.T, b *bundle) {
	_, err := b.edit("push_missing", herald.PushChange{Title: new("t")})
	wantErr(t, "unknown push", err, herald.ErrNotFound)
}

func testCancel(t *testing.T, b *bundle) {
	p := b.acceptScheduled(sendAt, "u1", "u2", "u3")
	if half := b.usageOn(b.app.ID, today); half != 3 {
		t.Fatalf("charged: got %d, want 3", half)
	}
	b.tick(time.Minute)
	got, err := b.cancel(p.ID)
	if err != nil || got.Status != herald.StatusCancelled || got.FinishedAt == nil || !got.FinishedAt.Equal(b.now) {
		t.Fatalf("got (%s finished %v, %v), want cancelled now", got.Status, got.FinishedAt, err)
	}
	if rec := b.pushOf(p.ID); rec.Status != herald.StatusCancelled || rec.FinishedAt == nil {
		t.Errorf("stored: got %s finished %v, want cancelled", rec.Status, rec.FinishedAt)
	}
	if half := b.usageOn(b.app.ID, today); half != 0 {
		t.Errorf("usage: got %d, want 0 (refunded)", half)
	}
	if states := b.jobs(fanoutJob(p.ID).Kind()); len(states) != 1 || states[0] != "cancelled" {
		t.Errorf("jobs: got %v, want the job cancelled", states)
	}
}

func testCancelBoundary(t *testing.T, b *bundle) {
	late := b.acceptScheduled(sendAt, "u1")
	b.tick(time.Second)
	onTime := b.acceptScheduled(sendAt, "u2")
	b.setNow(sendAt.Add(-herald.EditDeadline + time.Millisecond))
	_, err := b.cancel(late.ID)
	wantErr(t, "under 5 minutes before", err, herald.ErrScheduleLocked)
	if rec := b.pushOf(late.ID); rec.Status != herald.StatusScheduled {
		t.Errorf("refused cancel: got %s, want scheduled", rec.Status)
	}
	if states := b.jobs(fanoutJob(late.ID).Kind()); len(states) != 1 || states[0] == "cancelled" {
		t.Errorf("refused cancel: jobs %v, want the job kept", states)
	}
	b.setNow(sendAt.Add(-herald.EditDeadline))
	_, err = b.cancel(onTime.ID)
	wantErr(t, "exactly 5 minutes before", err, nil)
	if half := b.usageOn(b.app.ID, today); half != 1 {
		t.Errorf("usage: got %d, want 1 (one of two refunded)", half)
	}
}

func testCancelTwice(t *testing.T, b *bundle) {
	p := b.acceptScheduled(sendAt, "u1", "u2")
	_, err := b.cancel(p.ID)
	must(t, "CancelScheduled", err)
	_, err = b.cancel(p.ID)
	wantErr(t, "again", err, herald.ErrScheduleLocked)
	if half := b.usageOn(b.app.ID, today); half != 0 {
		t.Errorf("usage: got %d, want 0 (refunded once)", half)
	}
	// An immediate push cannot be cancelled.
	now := b.acceptUsers("u1")
	_, err = b.cancel(now.ID)
	wantErr(t, "immediate push", err, herald.ErrScheduleLocked)
	if st := b.pushOf(now.ID).Status; st != herald.StatusSending {
		t.Errorf("immediate push: got %s, want sending", st)
	}
}

func testCancelNextDay(t *testing.T, b *bundle) {
	p := b.acceptScheduled(epoch.Add(48*time.Hour), "u1", "u2")
	b.setNow(epoch.Add(24 * time.Hour))
	_, err := b.cancel(p.ID)
	must(t, "CancelScheduled", err)
	us, err := b.s.Usage(b.ctx, b.app.ID, "2025-06-01", "2025-06-30")
	must(t, "Usage", err)
	var total int64
	for _, u := range us {
		total += u.Half
	}
	if total != 0 {
		t.Errorf("usage over the month: got %+v, want the charge and its refund to sum to 0", us)
	}
}

func testCancelNotFound(t *testing.T, b *bundle) {
	_, err := b.cancel("push_missing")
	wantErr(t, "unknown push", err, herald.ErrNotFound)
}

// dueWork lists the watch's work for q.
func (b *bundle) dueWork(q herald.WatchQuery) []herald.DueWork {
	b.t.Helper()
	got, err := b.s.DueWork(b.ctx, q)
	if err != nil {
		b.t.Fatalf("DueWork: %v", err)
	}
	return got
}

func workIDs(ws []herald.DueWork) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.PushID)
	}
	return out
}

func testDueScheduled(t *testing.T, b *bundle) {
	later := b.acceptScheduled(sendAt.Add(2*time.Minute), "u1")
	first := b.acceptScheduled(sendAt, "u2")
	second := b.acceptScheduled(sendAt.Add(time.Minute), "u3")
	cancelled := b.acceptScheduled(sendAt, "u4")
	if _, err := b.cancel(cancelled.ID); err != nil {
		t.Fatal(err)
	}
	b.accept(b.newPush("u5")) // immediate: never listed
	long := sendAt.Add(-time.Hour)
	got := b.dueWork(herald.WatchQuery{From: long, Until: sendAt.Add(time.Minute), Limit: 10})
	if want := []string{first.ID, second.ID}; !slices.Equal(workIDs(got), want) {
		t.Fatalf("due by %v: got %v; want %v, soonest first", sendAt.Add(time.Minute), workIDs(got), want)
	}
	if !got[0].At.Equal(sendAt) || got[0].Deferred {
		t.Errorf("got %+v, want a fan-out at %v", got[0], sendAt)
	}
	if got := b.dueWork(herald.WatchQuery{From: long, Until: sendAt.Add(time.Hour), Limit: 1}); !slices.Equal(workIDs(got), []string{first.ID}) {
		t.Errorf("limit 1: got %v; want %v", workIDs(got), first.ID)
	}
	if got := b.dueWork(herald.WatchQuery{From: long, Until: sendAt.Add(-time.Second), Limit: 10}); len(got) != 0 {
		t.Errorf("due before the first: got %v; want none", workIDs(got))
	}
	if got := b.dueWork(herald.WatchQuery{From: long, Until: sendAt.Add(time.Hour), Limit: 10}); !slices.Equal(workIDs(got), []string{first.ID, second.ID, later.ID}) {
		t.Errorf("due within the hour: got %v; want all three scheduled, soonest first", workIDs(got))
	}
	if got := b.dueWork(herald.WatchQuery{From: sendAt.Add(time.Second), Until: sendAt.Add(time.Hour), Limit: 10}); !slices.Equal(workIDs(got), []string{second.ID, later.ID}) {
		t.Errorf("due from a second after the first: got %v; want the first left to its job", workIDs(got))
	}
}

// testDueStalledFanout: a fan-out begun and unfinished is listed once its
// last page is older than FanoutStalled, and no longer once it is done.
func testDueStalledFanout(t *testing.T, b *bundle) {
	d1, d2 := b.register("d1", "t1", "u1"), b.register("d2", "t2", "u2")
	p, rs := b.newPush("u1", "u2")
	b.accept(p, rs)
	ds := plan([]herald.Device{d1, d2}, 1)
	page := fanout(p.ID, ds[:1])
	page.More, page.To = true, sendstore.FanoutCursor{Seq: 1, Chunk: 1}
	b.start(p.ID, page)
	stalled := func(before time.Time) []herald.DueWork {
		return b.dueWork(herald.WatchQuery{From: b.now, Until: b.now, FanoutStalled: before, Limit: 10})
	}
	if got := stalled(b.now); len(got) != 0 {
		t.Errorf("a page recorded now: got %v, want nothing stalled", workIDs(got))
	}
	if got := stalled(b.now.Add(time.Millisecond)); len(got) != 1 || got[0].PushID != p.ID || got[0].Deferred || !got[0].At.Equal(b.now) {
		t.Errorf("after the page: got %+v, want the push's fan-out at its last page", got)
	}
	rest := fanout(p.ID, ds[1:])
	rest.From, rest.To = page.To, sendstore.FanoutCursor{Seq: 2, Chunk: 2}
	b.tick(time.Second)
	b.start(p.ID, rest)
	if got := stalled(b.now.Add(time.Hour)); len(got) != 0 {
		t.Errorf("fanned out: got %v, want nothing", workIDs(got))
	}
}

// testDueDeferredChunk: a deferred chunk is listed at its morning until
// it begins, and after only when its sends in flight have not moved since
// ChunkStalled.
func testDueDeferredChunk(t *testing.T, b *bundle) {
	p := b.deferring()
	q := herald.WatchQuery{From: morning.Add(-time.Minute), Until: morning, Limit: 10}
	want := []herald.DueWork{{PushID: p.ID, At: morning.UTC(), Deferred: true, Chunk: 1}}
	if got := b.dueWork(q); !slices.Equal(got, want) {
		t.Errorf("at the morning: got %+v, want %+v", got, want)
	}
	if q := (herald.WatchQuery{From: morning.Add(time.Second), Until: morning.Add(time.Hour), Limit: 10}); len(b.dueWork(q)) != 0 {
		t.Errorf("after its time: got %+v, want it left to its job", b.dueWork(q))
	}
	w := b.resume(p.ID, 1)
	b.advance(p.ID, sendstore.ChunkStep{Chunk: 1, New: rng(0, 2), Targets: slotTargets(0, w.Slots...)}, 2)
	moved := b.resume(p.ID, 1).MovedAt
	if !moved.Equal(b.now) {
		t.Errorf("moved at %v, want the step's time %v", moved, b.now)
	}
	q.ChunkStalled = b.now
	if got := b.dueWork(q); len(got) != 0 {
		t.Errorf("begun, moved at the stall bound: got %+v, want nothing", got)
	}
	q.ChunkStalled = b.now.Add(time.Millisecond)
	if got := b.dueWork(q); !slices.Equal(got, want) {
		t.Errorf("begun, stalled: got %+v, want %+v", got, want)
	}
	// Every send settled but the chunk not completed (its run stopped
	// between the two): still the watch's once stalled.
	b.tick(time.Second)
	b.advance(p.ID, sendstore.ChunkStep{Chunk: 1, Old: rng(0, 2), New: rng(2, 2)}, 2)
	if got := b.dueWork(q); len(got) != 0 {
		t.Errorf("settled just now: got %+v, want nothing", got)
	}
	q.ChunkStalled = b.now.Add(time.Millisecond)
	if got := b.dueWork(q); !slices.Equal(got, want) {
		t.Errorf("settled, not completed, stalled: got %+v, want %+v", got, want)
	}
	b.complete(p.ID, 1, false)
	if got := b.dueWork(q); len(got) != 0 {
		t.Errorf("completed: got %+v, want nothing", got)
	}
}

// testEditAdFooter: a scheduled push keeps the footer it was accepted with
// through an edit, whatever the app's settings say now; an edit that makes
// a push marketing stores the app's footer, one that makes it plain none.
func testEditAdFooter(t *testing.T, b *bundle) {
	p := b.acceptScheduled(sendAt, "u1")
	app := b.app
	app.AdSenderName, app.AdSenderContact, app.AdOptOut = "Now Co.", "02-0000", "now: settings"
	_, err := b.edit(p.ID, herald.PushChange{Title: new("(광고) sale"), App: &app})
	must(t, "EditScheduled", err)
	if rec := b.pushOf(p.ID); rec.AdFooter != "\nNow Co. 02-0000\nnow: settings" || !rec.Marketing {
		t.Errorf("made marketing: got footer %q, want the app's", rec.AdFooter)
	}
	app.AdSenderName = "Later Co."
	_, err = b.edit(p.ID, herald.PushChange{Content: new("new body"), App: &app})
	must(t, "EditScheduled", err)
	if rec := b.pushOf(p.ID); rec.AdFooter != "\nNow Co. 02-0000\nnow: settings" {
		t.Errorf("edited again: got footer %q, want the one fixed before", rec.AdFooter)
	}
	_, err = b.edit(p.ID, herald.PushChange{Title: new("plain"), App: &app})
	must(t, "EditScheduled", err)
	if rec := b.pushOf(p.ID); rec.AdFooter != "" || rec.Marketing {
		t.Errorf("made plain: got footer %q, want none", rec.AdFooter)
	}
}
