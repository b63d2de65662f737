package delivery

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/heraldpush/herald"
)

// The schedule watch: on a database several nodes share, every node fires
// each scheduled push at its time itself, besides the push's River job.
// River's job is made due a few seconds early (schedulerSlack) and waits
// in the process that fetched it; if that process dies meanwhile, the job
// stays running on the dead node until River's rescuer frees it, about two
// minutes late. With every live node racing to fan the push out at its
// time, it starts within a poll of its time as long as one node is alive,
// and still happens once: the fan-out records each page under a guard of
// its cursor, so the runs that lose the race write nothing, and the River
// job then finds the fan-out done.
const (
	// watchEvery is how often a node looks for scheduled pushes coming due.
	watchEvery = 2 * time.Second
	// watchAhead is how far ahead it looks: longer than watchEvery, so
	// each push is seen at least once before its time.
	watchAhead = 2*watchEvery + time.Second
	// watchLimit bounds the pushes one look takes; the next look takes
	// the rest (the River jobs take them anyway).
	watchLimit = 200
	// watchRuns bounds the fan-outs the watch runs at once.
	watchRuns = 8
)

// StartScheduleWatch starts the schedule watch of this node (see above);
// the function it returns stops it and waits for its fan-outs to end.
func (s *Service) StartScheduleWatch(store herald.ScheduleStore) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &scheduleWatch{s: s, store: store, watching: map[string]bool{}, slots: make(chan struct{}, watchRuns)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		for {
			w.look(ctx)
			select {
			case <-ctx.Done():
				w.runs.Wait()
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// scheduleWatch is one node's schedule watch: the pushes it waits for.
type scheduleWatch struct {
	s        *Service
	store    herald.ScheduleStore
	mu       sync.Mutex
	watching map[string]bool
	slots    chan struct{}
	runs     sync.WaitGroup
}

// look starts a run for each scheduled push due within watchAhead that
// the watch is not already waiting for. A failed look (the database is
// away) is retried at the next tick; the River jobs still hold the pushes.
func (w *scheduleWatch) look(ctx context.Context) {
	due, err := w.store.DueScheduled(ctx, w.s.cfg.Now().Add(watchAhead), watchLimit)
	if err != nil {
		if ctx.Err() == nil {
			w.s.cfg.Logger.Debug("schedule watch: listing due pushes", "err", err)
		}
		return
	}
	for _, p := range due {
		w.mu.Lock()
		seen := w.watching[p.PushID]
		w.watching[p.PushID] = true
		w.mu.Unlock()
		if !seen {
			w.runs.Add(1)
			go w.fire(ctx, p)
		}
	}
}

// fire fans the push out at its time, as its River job would: the
// fan-out's own checks make a run that comes second (or after an edit or
// a cancel) do nothing.
func (w *scheduleWatch) fire(ctx context.Context, p herald.ScheduledPush) {
	defer w.runs.Done()
	defer func() {
		w.mu.Lock()
		delete(w.watching, p.PushID)
		w.mu.Unlock()
	}()
	if err := w.s.waitUntil(ctx, p.At); err != nil {
		return
	}
	select {
	case w.slots <- struct{}{}:
		defer func() { <-w.slots }()
	case <-ctx.Done():
		return
	}
	job := &river.Job[FanoutArgs]{JobRow: &rivertype.JobRow{}, Args: FanoutArgs{PushID: p.PushID, SendAt: p.At}}
	err := (&fanoutWorker{s: w.s}).Work(ctx, job)
	var snooze *river.JobSnoozeError
	if err != nil && !errors.As(err, &snooze) && ctx.Err() == nil {
		// The River job of the push takes it from here.
		w.s.cfg.Logger.Debug("schedule watch: fan-out", "push", p.PushID, "err", err)
	}
}
