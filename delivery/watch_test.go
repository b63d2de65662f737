package delivery

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
	"github.com/heraldpush/herald/sqlite"
)

// add moves the clock on by d.
func (c *testClock) add(d time.Duration) { c.set(c.Now().Add(d)) }

// failingPages fails every read of the app's devices, as a fan-out that
// keeps failing does, and counts them.
type failingPages struct {
	*sqlite.DB
	mu    sync.Mutex
	reads int
}

func (f *failingPages) DevicePage(context.Context, string, sendstore.Selection, sendstore.DeviceCursor, int) ([]herald.Device, sendstore.DeviceCursor, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	return nil, sendstore.DeviceCursor{}, errors.New("a page that cannot be read")
}

func (f *failingPages) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

// watchBundle is a work bundle whose service and store run on a clock the
// test turns, with this node's watch (not started: the test looks).
type watchBundle struct {
	*workBundle
	clock *testClock
	w     *scheduleWatch
}

func newWatchBundle(t *testing.T, users int, store func(*sqlite.DB) Store, now time.Time) *watchBundle {
	b := newWorkBundle(t, users)
	clock := &testClock{now: now}
	b.db.Now = clock.Now
	st := Store(b.db)
	if store != nil {
		st = store(b.db)
	}
	b.s = New(Config{Store: st, Sender: b.sender, Webhooks: b.hooks, MasterKey: b.s.cfg.MasterKey, ChunkSize: 2, Concurrency: 2,
		FanoutPage: 2, Now: clock.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	w := newScheduleWatch(b.s, st)
	w.sleep = func(ctx context.Context, d time.Duration) error { clock.add(d); return ctx.Err() }
	return &watchBundle{workBundle: b, clock: clock, w: w}
}

// look looks once and waits for the runs it started.
func (b *watchBundle) look() {
	b.w.look(b.ctx)
	b.w.runs.Wait()
}

// TestWatchBacksOffFailingWork: the watch fired a scheduled push whose
// fan-out keeps failing at every look (every 2 s) for as long as it was
// not started, forever. Now each run tries a few times, the push is not
// looked at again until a backoff that doubles, and a minute after its
// time it is its job's alone.
func TestWatchBacksOffFailingWork(t *testing.T) {
	t.Parallel()
	at := time.Date(2027, 1, 6, 12, 0, 0, 0, time.UTC)
	var fp *failingPages
	b := newWatchBundle(t, 3, func(db *sqlite.DB) Store { fp = &failingPages{DB: db}; return fp }, at.Add(-time.Second))
	p := herald.Push{ID: herald.NewID("push_", at), AppID: b.app.ID, Kind: herald.KindAll, Status: herald.StatusScheduled,
		Content: herald.Content{Title: "t", Content: "c"}, ScheduledAt: &at, CreatedAt: at.Add(-time.Hour)}
	_, _, err := b.s.Accept(b.ctx, p, nil, nil)
	must(t, err)

	b.clock.set(at)
	b.look()
	if got := fp.count(); got != watchTries {
		t.Fatalf("first look: %d tries, want %d", got, watchTries)
	}
	b.look() // the clock moved by the run's own waits, less than the backoff
	if got := fp.count(); got != watchTries {
		t.Fatalf("a look within the backoff fired again: %d tries, want %d", got, watchTries)
	}
	b.clock.add(2 * watchBackoff)
	b.look()
	if got := fp.count(); got != 2*watchTries {
		t.Fatalf("a look after the backoff: %d tries, want %d", got, 2*watchTries)
	}
	b.clock.set(at.Add(watchBehind + time.Second))
	b.look()
	if got := fp.count(); got != 2*watchTries {
		t.Fatalf("a minute after its time the watch still fires it: %d tries", got)
	}
}

// newDeferredPush fans out, on a watch bundle of an app in Seoul, a
// marketing push with nightPolicy defer to u1..u3 at 23:00 there, every
// device with marketing consent and none with night consent, and returns
// the bundle, the push and its morning.
func newDeferredPush(t *testing.T) (*watchBundle, string, time.Time) {
	t.Helper()
	seoul, _ := time.LoadLocation("Asia/Seoul")
	b := newWatchBundle(t, 3, nil, time.Date(2027, 1, 5, 23, 0, 0, 0, seoul))
	b.app.TimeZone = "Asia/Seoul"
	must(t, b.db.UpdateApp(b.ctx, b.app))
	yes := true
	for _, d := range []string{"d1", "d2", "d3"} {
		if _, err := b.db.SetDeviceConsent(b.ctx, b.app.ID, d, herald.ConsentChange{Marketing: &yes}); err != nil {
			b.t.Fatal(err)
		}
	}
	now := b.clock.Now()
	p := herald.Push{ID: herald.NewID("push_", now), AppID: b.app.ID, Kind: herald.KindUsers, Status: herald.StatusSending,
		Content: herald.Content{Title: "(광고) sale", Content: "c"}, Marketing: true, NightPolicy: herald.NightDefer,
		RequestedUsers: 3, ServerActionsHalf: 3, CreatedAt: now}
	id, _, err := b.s.Accept(b.ctx, p, []herald.Recipient{{UserID: "u1"}, {UserID: "u2"}, {UserID: "u3"}}, nil)
	must(b.t, err)
	must(b.t, b.fanout(id))
	got := b.push(id)
	if got.Counts.DeferredNight != 3 || got.DeferredUntil == nil {
		t.Fatalf("fan-out at night: got %+v, want 3 tokens deferred", got.Counts)
	}
	return b, id, *got.DeferredUntil
}

// TestWatchSendsDeferredChunkAtMorning: the deferred chunks' jobs are held
// by a node that died; at 08:00 the watch of a live node sends them.
func TestWatchSendsDeferredChunkAtMorning(t *testing.T) {
	t.Parallel()
	b, id, morning := newDeferredPush(t)

	b.clock.set(morning.Add(-watchAhead - time.Second))
	b.look()
	if n := len(b.sender.sent); n != 0 {
		t.Fatalf("before the morning came into view: %d sends", n)
	}
	b.clock.set(morning)
	b.look()
	for _, tok := range []string{"t1", "t2", "t3"} {
		if n := b.sender.times(tok); n != 1 {
			t.Errorf("%s: sent %d times at the morning, want once", tok, n)
		}
	}
	if got := b.push(id); got.Counts.Sent != 3 || got.Counts.DeferredNight != 0 {
		t.Errorf("after the morning's run: got %+v, want 3 sent, none deferred", got.Counts)
	}
}

// TestWatchLeavesLiveChunk: at the morning a deferred chunk's job began
// sending (sends in flight); the watch leaves them while they move, and
// takes them over once they stalled (its node died mid-chunk).
func TestWatchLeavesLiveChunk(t *testing.T) {
	t.Parallel()
	b, id, morning := newDeferredPush(t)
	b.clock.set(morning)
	// The job's run marks the first deferred chunk's two sends in flight.
	chunk := -1
	for _, a := range b.sendJobs(id) {
		if !a.Morning.IsZero() && chunk < 0 {
			chunk = a.Chunk
		}
	}
	w, err := b.db.ResumeChunk(b.ctx, id, chunk)
	must(t, err)
	var targets []sendstore.SlotTarget
	for i, d := range w.Slots {
		targets = append(targets, sendstore.SlotTarget{Pos: i, DeviceID: d.DeviceID, Token: d.Token})
	}
	if _, _, err := b.db.AdvanceChunk(b.ctx, b.app.ID, id, sendstore.ChunkStep{Chunk: chunk, New: sendstore.Range{Marked: len(w.Slots)},
		Targets: targets}); err != nil {
		t.Fatal(err)
	}
	inFlight := len(w.Slots)
	// The chunk's job, run again meanwhile (a second fetch, a rescue),
	// waits for the sends to stall rather than sending them again.
	err = (&sendWorker{s: b.s}).Work(b.ctx, &river.Job[SendArgs]{JobRow: &rivertype.JobRow{Attempt: 1},
		Args: SendArgs{PushID: id, Chunk: chunk, Morning: morning}})
	var snooze *river.JobSnoozeError
	if !errors.As(err, &snooze) || snooze.Duration != chunkStall {
		t.Fatalf("the job's run beside a live one: got %v, want a snooze of %v", err, chunkStall)
	}

	b.look()
	if got := b.push(id).Counts.Sent; got != 3-inFlight {
		t.Fatalf("the watch at the morning: %d sent, want the %d not in flight", got, 3-inFlight)
	}
	for _, s := range w.Slots {
		if n := b.sender.times(s.Token); n != 0 {
			t.Errorf("%s, in flight in a live run, sent again by the watch", s.Token)
		}
	}
	b.clock.add(chunkStall + watchEvery)
	b.look()
	// The watch's run took the stalled sends over: settled into a retry
	// chunk, whose job (any node's) sends them.
	retried := 0
	for _, a := range b.sendJobs(id) {
		if a.Chunk < 0 {
			retried++
			must(t, b.send(id, a.Chunk))
		}
	}
	if retried != 1 {
		t.Fatalf("after the run stalled: %d retry chunks, want 1", retried)
	}
	for _, s := range w.Slots {
		if n := b.sender.times(s.Token); n != 1 {
			t.Errorf("%s: sent %d times after the run stalled, want once", s.Token, n)
		}
	}
}
