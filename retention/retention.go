// Package retention deletes what Herald no longer keeps (DESIGN section
// 12): once a day, the bodies and rows of pushes finished longer ago than
// the retention (HERALD_RETENTION_DAYS), expired idempotency keys, and
// the consent trail's records older than two years that are not their
// pair's latest; then, on the embedded store, it gives the space freed
// back to the file system.
//
// The words it uses:
//
//   - A run is one day's pruning (UTC): it begins at the first tick of
//     the day and ends when nothing is left to delete. Its state (day,
//     counts so far, where it is in the trail) is kept in the store, so a
//     run goes on across the job runs, nodes and restarts that make it up,
//     and a day has one run however many nodes tick.
//   - A tick is one run of the periodic job (every minute, on the node
//     River elects leader): it works on the day's run for at most Slice,
//     then yields to the next tick.
//   - A step is one short write transaction of the store's (see
//     Store), on the writer's bulk lane, deleting at most
//     its limit of rows (what it must decide is read before, outside it).
//     Each kind of step sizes its limit from how long its last one held
//     the writer, aiming at StepTarget, so that none holds the embedded
//     store's one writer for more than about 100 ms; between steps the
//     worker pauses (see Pace): as long as the step held the writer
//     when nothing else wrote meanwhile, so that an idle store is pruned
//     at half the writer's time, and BusyPause times as long when other
//     transactions ran, so that a fan-out beside pruning keeps nearly all
//     of the writer (and of the machine's cores).
//
// It owns the vocabulary of its store too (store.go): the Store both SQL
// engines implement and storetest checks, a Step's result, the Run kept
// between ticks, the Deleted counts by kind (the Retained* kinds) and the
// consent trail's cursor. How long Herald keeps things (the retention
// days and their parsing) stays in package herald for now, beside the
// command's configuration that reads HERALD_RETENTION_DAYS.
package retention

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald"
)

// Defaults of Config.
const (
	// Slice is how long one tick works at most (real time, well within
	// River's job timeout).
	Slice = 30 * time.Second
	// StepTarget is how long one step aims to hold the writer.
	StepTarget = 25 * time.Millisecond
	// BusyPause is how many times as long as its step the pause after it
	// is when the store wrote other transactions meanwhile (see Pace):
	// pruning then takes about a twentieth of the writer.
	BusyPause = 19
)

// Step limits: where a kind of step starts, and its bounds.
const (
	firstLimit = 200
	maxLimit   = 20_000
	// reclaimPages is the first incremental vacuum's size (pages of 4 KiB),
	// maxReclaim its largest: freeing pages moves those at the file's end,
	// which costs more than deleting rows, and unevenly.
	reclaimPages = 256
	maxReclaim   = 1024
)

// Pruner deletes up to limit old records of one kind made before before,
// as one step (Step). See Config.AccessRecords.
type Pruner func(ctx context.Context, before time.Time, limit int) (Step, error)

// Config is the worker's dependencies.
type Config struct {
	Store Store
	// Days is the retention of finished pushes (HERALD_RETENTION_DAYS);
	// herald.DefaultRetentionDays when zero.
	Days int
	// Now is the clock the rules run on (time.Now when nil).
	Now    func() time.Time
	Logger *slog.Logger
	// Deleted, when set, is told what each step deleted, and Step how
	// long each held the writer (the metrics).
	Deleted func(kind string, n int64)
	Step    func(step string, held time.Duration)
	// Reclaim, when set, gives up to pages free pages of the store's file
	// back to the file system and returns how many are left (SQLite's
	// incremental vacuum; nil on PostgreSQL, whose autovacuum does it).
	Reclaim func(ctx context.Context, pages int) (left int64, err error)
	// AccessRecords, when set, prunes the access records made before
	// herald.AccessRecordDays ago, keeping the first kept record's
	// prevHash as the chain's anchor (DESIGN section 11): the access
	// records' store provides it.
	AccessRecords Pruner
	// Slice bounds a tick (Slice when zero).
	Slice time.Duration
	// Writes, when set, counts the write transactions the store has begun
	// so far (the embedded store's writer): the pauses grow when others
	// ran beside the steps (see Pace). Without it every pause is the
	// idle one.
	Writes func() uint64
}

// Worker runs the daily retention.
type Worker struct {
	cfg Config
	// mu makes this process's ticks (River's, a test's) take turns.
	mu sync.Mutex
	// limits holds each kind of step's current limit, by step name.
	limits map[string]int
	// mark is the store's count of write transactions (Config.Writes) at
	// the end of the last step, before its pause: what began since ran
	// beside that pause and the step after it.
	mark uint64
}

// New returns a worker with cfg's defaults filled in.
func New(cfg Config) *Worker {
	if cfg.Days == 0 {
		cfg.Days = herald.DefaultRetentionDays
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Deleted == nil {
		cfg.Deleted = func(string, int64) {}
	}
	if cfg.Step == nil {
		cfg.Step = func(string, time.Duration) {}
	}
	if cfg.Slice <= 0 {
		cfg.Slice = Slice
	}
	return &Worker{cfg: cfg, limits: map[string]int{}}
}

// Args is the periodic job's.
type Args struct{}

// Kind names the job.
func (Args) Kind() string { return "herald.retention" }

// Register adds the worker and its periodic job (every minute, and at
// start) to River's configuration.
func (w *Worker) Register(rc *river.Config) {
	river.AddWorker(rc.Workers, &jobWorker{w: w})
	rc.PeriodicJobs = append(rc.PeriodicJobs, river.NewPeriodicJob(river.PeriodicInterval(time.Minute),
		func() (river.JobArgs, *river.InsertOpts) { return Args{}, nil }, &river.PeriodicJobOpts{RunOnStart: true}))
}

type jobWorker struct {
	river.WorkerDefaults[Args]
	w *Worker
}

// Work runs one tick.
func (j *jobWorker) Work(ctx context.Context, _ *river.Job[Args]) error {
	_, err := j.w.Tick(ctx)
	return err
}

// step is one kind of step: its name (its limit's key) and what it does
// for a run, with a limit.
type step struct {
	name string
	do   func(ctx context.Context, run *Run, limit int) (Step, error)
}

// steps are a run's kinds of step, in order: a push's body first, so that
// it says expired before its rows go.
func (w *Worker) steps() []step {
	s := w.cfg.Store
	pushesBefore := func(run *Run) time.Time { return run.Began.Add(-herald.Days(w.cfg.Days)) }
	steps := []step{
		{"expire", func(ctx context.Context, run *Run, limit int) (Step, error) {
			return s.ExpirePushes(ctx, pushesBefore(run), w.cfg.Now(), limit)
		}},
		{"rows", func(ctx context.Context, _ *Run, limit int) (Step, error) {
			return s.PruneExpired(ctx, limit)
		}},
		{"idempotency", func(ctx context.Context, run *Run, limit int) (Step, error) {
			return s.PruneIdempotency(ctx, run.Began.Add(-herald.IdempotencyWindow), limit)
		}},
		{"delivery_events", func(ctx context.Context, run *Run, limit int) (Step, error) {
			return s.PruneDeliveryEvents(ctx, run.Began.Add(-herald.EventsKeptFor), limit)
		}},
		{"marketing_receipts", func(ctx context.Context, run *Run, limit int) (Step, error) {
			return s.PruneReceipts(ctx, run.Began.Add(-herald.CapRetention), limit)
		}},
		{"consent", func(ctx context.Context, run *Run, limit int) (Step, error) {
			st, next, err := s.PruneConsentTrail(ctx, run.Began.Add(-herald.Days(herald.ConsentTrailDays)), run.Trail, limit)
			run.Trail = next
			return st, err
		}},
	}
	// Access records (DESIGN section 11): kept herald.AccessRecordDays,
	// the first kept record's prevHash kept as the chain's anchor.
	if prune := w.cfg.AccessRecords; prune != nil {
		steps = append(steps, step{"access", func(ctx context.Context, run *Run, limit int) (Step, error) {
			return prune(ctx, run.Began.Add(-herald.Days(herald.AccessRecordDays)), limit)
		}})
	}
	return steps
}

// Tick works on the day's run for at most Slice, beginning it if the day
// has none yet; done reports that the day's run has ended (by this tick
// or an earlier one, on any node).
func (w *Worker) Tick(ctx context.Context) (done bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	run, err := w.cfg.Store.RetentionRun(ctx)
	if err != nil {
		return false, err
	}
	now := w.cfg.Now()
	if today := now.UTC().Format(time.DateOnly); run.Day != today {
		run = Run{Day: today, Began: now, Deleted: Deleted{}}
	} else if run.Done {
		return true, nil
	}
	if run.Deleted == nil {
		run.Deleted = Deleted{}
	}
	end := time.Now().Add(w.cfg.Slice)
	done, err = w.work(ctx, &run, end)
	if err != nil {
		// What was deleted stays deleted: keep the counts for the next tick.
		return false, errors.Join(err, w.cfg.Store.SaveRetentionRun(context.WithoutCancel(ctx), run))
	}
	run.Done = done
	if err := w.cfg.Store.SaveRetentionRun(ctx, run); err != nil {
		return false, err
	}
	if done {
		w.logRun(run, w.cfg.Now())
	}
	return done, nil
}

// work runs the run's steps, each kind until it has nothing left, then
// reclaims the space; false when the slice ended first.
func (w *Worker) work(ctx context.Context, run *Run, end time.Time) (bool, error) {
	w.mark = w.writes()
	for _, st := range w.steps() {
		for more := true; more; {
			if time.Now().After(end) {
				return false, nil
			}
			limit := w.limit(st.name, firstLimit)
			done, err := st.do(ctx, run, limit)
			if err != nil {
				return false, err
			}
			more = done.More
			w.held(run, st.name, done.Held)
			w.limits[st.name] = adapt(limit, done.Held, 1, maxLimit)
			for kind, n := range done.Deleted {
				if n > 0 {
					run.Deleted[kind] += n
					w.cfg.Deleted(kind, n)
				}
			}
			if err := w.pause(ctx, done.Held); err != nil {
				return false, err
			}
		}
	}
	return w.reclaim(ctx, run, end)
}

// reclaim gives the free pages back in steps; false when the slice ended
// first.
func (w *Worker) reclaim(ctx context.Context, run *Run, end time.Time) (bool, error) {
	if w.cfg.Reclaim == nil {
		return true, nil
	}
	for left := int64(1); left > 0; {
		if time.Now().After(end) {
			return false, nil
		}
		pages := w.limit("reclaim", reclaimPages)
		began := time.Now()
		var err error
		if left, err = w.cfg.Reclaim(ctx, pages); err != nil {
			return false, err
		}
		took := time.Since(began)
		w.held(run, "reclaim", took)
		w.limits["reclaim"] = adapt(pages, took, 16, maxReclaim)
		if err := w.pause(ctx, took); err != nil {
			return false, err
		}
	}
	return true, nil
}

// held notes how long a step held the writer: in the metrics, and in the
// run when it is its longest.
func (w *Worker) held(run *Run, step string, held time.Duration) {
	w.cfg.Step(step, held)
	if held > run.Longest {
		run.Longest, run.LongestStep = held, step
	}
}

// limit is the current limit of a kind of step.
func (w *Worker) limit(name string, first int) int {
	if n, ok := w.limits[name]; ok {
		return n
	}
	return first
}

// adapt sizes a step's next limit from how long one of limit took:
// doubled while well under StepTarget, halved over it, within lo..hi.
func adapt(limit int, took time.Duration, lo, hi int) int {
	switch {
	case took > StepTarget:
		limit /= 2
	case took < StepTarget/4:
		limit *= 2
	}
	return min(max(limit, lo), hi)
}

// writes is the store's count of write transactions (0 without one).
func (w *Worker) writes() uint64 {
	if w.cfg.Writes == nil {
		return 0
	}
	return w.cfg.Writes()
}

// Pace is the pause after a step that held the writer for held, when the
// store began began write transactions since the end of the step before
// (during that step's pause and this step; this step's own among them): held when the step's was the only one, so
// that the bulk work queued behind retention's steps keeps at least half
// the writer; BusyPause times held when others wrote meanwhile, so that
// retention takes a small share of a busy store.
func Pace(held time.Duration, began uint64) time.Duration {
	if began > 1 {
		return held * BusyPause
	}
	return held
}

// pause waits (real time) as Pace says after a step that held the
// writer for held.
func (w *Worker) pause(ctx context.Context, held time.Duration) error {
	now := w.writes()
	d := Pace(held, now-w.mark)
	w.mark = now
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// logRun writes the run's one line: its counts by kind.
func (w *Worker) logRun(run Run, now time.Time) {
	attrs := []any{"day", run.Day, "took", now.Sub(run.Began).Round(time.Second), "retention_days", w.cfg.Days,
		"longest_step", run.Longest.Round(time.Millisecond), "longest_step_kind", run.LongestStep}
	for _, kind := range Kinds {
		if kind == RetainedAccessRecord && w.cfg.AccessRecords == nil {
			continue
		}
		attrs = append(attrs, kind, run.Deleted[kind])
	}
	w.cfg.Logger.Info("retention run", attrs...)
}
