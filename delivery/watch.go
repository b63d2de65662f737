package delivery

import (
	"context"
	"errors"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald"
)

// The schedule watch: on a database several nodes share, every node runs
// the send work that is due at a set time itself, besides its River job:
// a scheduled push's fan-out and a chunk deferred to the morning. River's
// job is made due a few seconds early (schedulerSlack) and waits in the
// process that fetched it; if that process dies meanwhile, the job stays
// running on the dead node until River's rescuer frees it, about two
// minutes late. With every live node racing to run the work at its time,
// it starts within a poll of its time as long as one node is alive, and
// still happens once: a fan-out records each page under a guard of its
// cursor and a chunk each step under a guard of its range, so the runs
// that lose the race write nothing and stop.
//
// A run that wins and then stops part-way (an error, or its node died)
// leaves no job behind it when the job's run was the one that lost, so the
// watch also takes up the work that stalled: a sending push's fan-out
// with no page recorded for fanoutStall, and a deferred chunk begun and
// not completed whose range has not moved for chunkStall. A run of the watch
// goes on through yields and retries its errors a few times; work whose
// runs keep failing is looked at again after a backoff that grows, so it
// neither spins nor keeps other work out of a look.
const (
	// watchEvery is how often a node looks for work coming due.
	watchEvery = 2 * time.Second
	// watchAhead is how far ahead it looks: longer than watchEvery, so
	// each push is seen at least once before its time.
	watchAhead = 2*watchEvery + time.Second
	// watchBehind is how long work not begun stays the watch's after its
	// time; later, its job alone runs it.
	watchBehind = time.Minute
	// watchLimit bounds the pieces of each kind one look takes; the next
	// look takes the rest (the River jobs take them anyway).
	watchLimit = 200
	// watchRuns bounds the runs the watch has at once.
	watchRuns = 8
	// watchTries bounds the tries of one run of the watch; watchBackoff
	// is the first wait between them and after a run that failed, doubled
	// each failure up to watchBackoffMax.
	watchTries      = 3
	watchBackoff    = time.Second
	watchBackoffMax = 5 * time.Minute
	// fanoutStall: a fan-out with no page recorded for this long has no
	// run (a page takes a second or two).
	fanoutStall = 15 * time.Second
	// chunkStall: sends in flight whose range has not moved for this long
	// have no run (each FCM request ends within 10 s).
	chunkStall = 30 * time.Second
)

// StartScheduleWatch starts the schedule watch of this node (see above);
// the function it returns stops it and waits for its runs to end.
func (s *Service) StartScheduleWatch(store herald.ScheduleStore) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	w := newScheduleWatch(s, store)
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

// scheduleWatch is one node's schedule watch: the work it runs, and the
// work whose runs failed, with when to try it again.
type scheduleWatch struct {
	s        *Service
	store    herald.ScheduleStore
	mu       sync.Mutex
	watching map[string]bool
	failed   map[string]failure
	slots    chan struct{}
	runs     sync.WaitGroup
	// sleep waits between a run's tries (Service.sleep; tests turn a
	// clock of their own).
	sleep func(ctx context.Context, d time.Duration) error
}

// failure is how often a piece of work's runs failed in a row, and when
// the watch may run it again (also after a run left it waiting).
type failure struct {
	n     int
	after time.Time
}

func newScheduleWatch(s *Service, store herald.ScheduleStore) *scheduleWatch {
	return &scheduleWatch{s: s, store: store, watching: map[string]bool{}, failed: map[string]failure{},
		slots: make(chan struct{}, watchRuns), sleep: s.sleep}
}

// look starts a run for each piece of work due within watchAhead, or
// stalled, that the watch is not already running nor backing off from. A
// failed look (the database is away) is retried at the next tick; the
// River jobs still hold the work.
func (w *scheduleWatch) look(ctx context.Context) {
	now := w.s.cfg.Now()
	due, err := w.store.DueWork(ctx, herald.WatchQuery{From: now.Add(-watchBehind), Until: now.Add(watchAhead),
		FanoutStalled: now.Add(-fanoutStall), ChunkStalled: now.Add(-chunkStall), Limit: watchLimit})
	if err != nil {
		if ctx.Err() == nil {
			w.s.cfg.Logger.Debug("schedule watch: listing due work", "err", err)
		}
		return
	}
	for _, d := range due {
		key := workKey(d)
		w.mu.Lock()
		skip := w.watching[key] || now.Before(w.failed[key].after)
		if !skip {
			w.watching[key] = true
		}
		w.mu.Unlock()
		if !skip {
			w.runs.Add(1)
			go w.fire(ctx, key, d)
		}
	}
}

// workKey names a piece of work in the watch's maps.
func workKey(d herald.DueWork) string {
	if d.Deferred {
		return d.PushID + "/" + strconv.Itoa(d.Chunk)
	}
	return d.PushID
}

// fire runs the work at its time, as its River job would: the work's own
// guards make a run that comes second (or after an edit or a cancel) do
// nothing. The run's context carries the work's key as the pprof label
// "work", so that a profile, and the simulation's scheduler, tell the
// watch's concurrent runs apart.
func (w *scheduleWatch) fire(ctx context.Context, key string, d herald.DueWork) {
	defer w.runs.Done()
	ctx = pprof.WithLabels(ctx, pprof.Labels("work", key))
	defer func() {
		w.mu.Lock()
		delete(w.watching, key)
		w.mu.Unlock()
	}()
	if err := w.s.waitUntil(ctx, d.At); err != nil {
		return
	}
	select {
	case w.slots <- struct{}{}:
		defer func() { <-w.slots }()
	case <-ctx.Done():
		return
	}
	wait, err := w.run(ctx, func() error {
		if d.Deferred {
			return w.s.send(ctx, SendArgs{PushID: d.PushID, Chunk: d.Chunk, Morning: d.At}, 1, true)
		}
		return w.s.fanout(ctx, FanoutArgs{PushID: d.PushID, SendAt: d.At}, time.Time{}, 0)
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case ctx.Err() != nil:
	case err != nil:
		f := w.failed[key]
		f.n++
		f.after = w.s.cfg.Now().Add(min(watchBackoffMax, watchBackoff<<min(f.n, 20)))
		w.failed[key] = f
		w.s.cfg.Logger.Warn("schedule watch: work failed; its job and the next looks take it up",
			"push", d.PushID, "deferredChunk", d.Deferred, "chunk", d.Chunk, "failures", f.n, "err", err)
		return
	case wait > 0: // the work waits (FCM asked it to): not before then
		w.failed[key] = failure{after: w.s.cfg.Now().Add(wait)}
		return
	}
	delete(w.failed, key)
}

// run runs work until it ends: again at once after a yield, again after
// a short wait (up to watchTries tries) after an error. Work that must
// wait longer than a look (the app's sends are paced, FCM asked to wait)
// is left to its job and to a later look: run returns how long.
func (w *scheduleWatch) run(ctx context.Context, work func() error) (time.Duration, error) {
	backoff := watchBackoff
	for try := 1; ; {
		err := work()
		wait := backoff
		var snooze *river.JobSnoozeError
		switch {
		case err == nil, ctx.Err() != nil:
			return 0, nil
		case errors.As(err, &snooze) && snooze.Duration <= watchEvery:
			wait = snooze.Duration
		case errors.As(err, &snooze):
			return snooze.Duration, nil
		case try == watchTries:
			return 0, err
		default:
			try, backoff = try+1, backoff*2
		}
		if w.sleep(ctx, wait) != nil {
			return 0, nil
		}
	}
}

// sleep waits d on the service's clock, or until ctx ends.
func (s *Service) sleep(ctx context.Context, d time.Duration) error {
	return s.waitUntil(ctx, s.cfg.Now().Add(d))
}
