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

type riverKey struct{}

// raceStore lets the watch's run win the first page (River's run waits for
// it) and fails the watch's second page once, as a database blip would.
type raceStore struct {
	*sqlite.DB
	mu         sync.Mutex
	watchPage1 chan struct{} // closed once the watch recorded page 1
	blipped    bool
	slow       time.Duration // instead of a blip, the watch's page 2 read takes this long
}

func (r *raceStore) DevicePage(ctx context.Context, appID string, sel sendstore.Selection, after sendstore.DeviceCursor, limit int) ([]herald.Device, sendstore.DeviceCursor, error) {
	if ctx.Value(riverKey{}) == nil && after != (sendstore.DeviceCursor{}) {
		r.mu.Lock()
		first := !r.blipped
		r.blipped = true
		r.mu.Unlock()
		if first && r.slow > 0 {
			time.Sleep(r.slow) // a large fan-out: pages take their time
		} else if first {
			return nil, after, herald.Unavailable(errors.New("blip"))
		}
	}
	return r.DB.DevicePage(ctx, appID, sel, after, limit)
}

func (r *raceStore) StartSending(ctx context.Context, pushID string, f sendstore.Fanout) (bool, error) {
	if ctx.Value(riverKey{}) != nil && f.From.Start() {
		<-r.watchPage1 // River's run computed page 1 too, and records it second
	}
	ok, err := r.DB.StartSending(ctx, pushID, f)
	if ctx.Value(riverKey{}) == nil && f.From.Start() {
		close(r.watchPage1)
	}
	return ok, err
}

func TestReproWatchAbandonsFanout(t *testing.T) { reproWatch(t, 0, 0, 2500*time.Millisecond) }

// TestReproWatchAbandonsSlowFanout: no failure at all; the watch's run
// yielded after the send slice (30 s, here 100 ms) with
// river.JobSnooze(0), which fire dropped.
func TestReproWatchAbandonsSlowFanout(t *testing.T) {
	reproWatch(t, 100*time.Millisecond, 200*time.Millisecond, 1500*time.Millisecond)
}

func reproWatch(t *testing.T, slice, slow, settle time.Duration) {
	b := newWorkBundle(t, 5)
	rs := &raceStore{DB: b.db, watchPage1: make(chan struct{}), slow: slow}
	b.s = New(Config{Store: rs, Sender: b.sender, Webhooks: b.hooks, MasterKey: b.s.cfg.MasterKey, ChunkSize: 2,
		Concurrency: 2, FanoutPage: 2, SendSlice: slice, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	now := time.Now()
	at := now.Add(300 * time.Millisecond).Truncate(time.Millisecond)
	p := herald.Push{ID: herald.NewID("push_", now), AppID: b.app.ID, Kind: herald.KindAll, Status: herald.StatusScheduled,
		Content: herald.Content{Title: "title", Content: "content"}, ScheduledAt: &at, CreatedAt: now}
	id, _, err := b.s.Accept(b.ctx, p, nil, nil)
	must(t, err)

	stop := b.s.StartScheduleWatch(rs) // this node's watch
	// River's job of the push, fetched early, runs at the same time.
	rctx := context.WithValue(b.ctx, riverKey{}, true)
	riverErr := (&fanoutWorker{s: b.s}).Work(rctx, &river.Job[FanoutArgs]{JobRow: &rivertype.JobRow{Attempt: 1},
		Args: FanoutArgs{PushID: id, SendAt: at}})
	time.Sleep(settle) // the watch's run ends; its next look runs
	stop()

	_, done, err := rs.FanoutProgress(b.ctx, id)
	must(t, err)
	now = time.Now()
	due, err := rs.DueWork(b.ctx, herald.WatchQuery{From: now.Add(-time.Hour), Until: now.Add(time.Hour),
		FanoutStalled: now.Add(-fanoutStall), Limit: 10})
	must(t, err)
	pr := b.push(id)
	t.Logf("River job returned %v (River completes the job); fan-out done=%v; status=%s; tokens=%d; due for the watch=%d",
		riverErr, done, pr.Status, pr.Counts.Tokens, len(due))
	if riverErr == nil && !done && len(due) == 0 {
		t.Fatalf("fan-out abandoned: River's job completed after losing page 1, the watch's run gave up at page 2, and no one resumes it")
	}
}
