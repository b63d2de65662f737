package delivery

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/heraldpush/herald"
)

// Job time bounds. Every job ends within JobTimeout (a send job yields
// after SendSlice and goes on in a new run, and keeps its outcomes through
// an outage for at most settleRetryFor: 30 + 45 s), so that River's
// rescuer, which makes a job available again once it has run for
// RescueAfter, never takes over a job that is still running: a live
// node's work is never done twice. The jobs of a node that died are
// released sooner by the live nodes' heartbeat (nodeDeadAfter); the
// rescuer is for the rest (a fetch whose answer was lost with its
// connection).
const (
	JobTimeout  = 80 * time.Second
	RescueAfter = 90 * time.Second
	// SendSlice is the default Config.SendSlice.
	SendSlice = 30 * time.Second
)

// slowPoll is how often idle workers of the scheduled and default queues
// look for jobs at most: scheduled fan-outs are made due early and wait in
// process anyway, and a push's finish or a webhook can wait a second.
const slowPoll = time.Second

// RiverConfig returns River's configuration for delivery's jobs: queues,
// workers, timeouts and the rescuer. pollInterval is how often idle
// fan-out and send workers look for new jobs (the other queues look at
// most once a second, slowPoll). It is a fallback: River wakes them for
// a job made due, through LISTEN/NOTIFY on PostgreSQL and on SQLite
// through a table its listener reads every 50 ms. On SQLite each look is
// a write on the one writer, so the interval trades how soon a job that
// nothing announced starts against what an idle server spends. Busy
// workers do not wait for it: River fetches again as soon as a job ends.
func (s *Service) RiverConfig(pollInterval time.Duration, logger *slog.Logger) *river.Config {
	queues := Queues()
	for _, name := range []string{QueueScheduled, river.QueueDefault} {
		q := queues[name]
		q.FetchPollInterval = max(pollInterval, slowPoll)
		queues[name] = q
	}
	return &river.Config{
		Middleware:           []rivertype.Middleware{&storeRetry{}},
		Queues:               queues,
		Workers:              s.Workers(),
		FetchPollInterval:    pollInterval,
		FetchCooldown:        min(pollInterval, 10*time.Millisecond),
		JobTimeout:           JobTimeout,
		RescueStuckJobsAfter: RescueAfter,
		Logger:               logger,
		PeriodicJobs:         []*river.PeriodicJob{DailyJob()},
	}
}

// storeWait is how soon a job that met an unavailable store runs again.
const storeWait = time.Second

// storeRetry has a job that failed on an unavailable store (unreachable,
// frozen, out of connections: herald.ErrUnavailable) run again after
// storeWait, snoozed rather than failed: River's own backoff (the
// attempt's fourth power in seconds) would leave a push waiting minutes
// after a database that was away for seconds, and a snooze counts no
// attempt, so no outage discards a job.
type storeRetry struct{ river.WorkerMiddlewareDefaults }

// Work runs the job and snoozes it when its store was unavailable.
func (*storeRetry) Work(ctx context.Context, _ *rivertype.JobRow, doInner func(context.Context) error) error {
	err := doInner(ctx)
	if errors.Is(err, herald.ErrUnavailable) && ctx.Err() == nil {
		return river.JobSnooze(storeWait)
	}
	return err
}
