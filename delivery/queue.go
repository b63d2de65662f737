package delivery

import (
	"log/slog"
	"time"

	"github.com/riverqueue/river"
)

// Job time bounds. Every job ends well within JobTimeout (a send job yields
// after sendSlice and goes on in a new run), so that River's rescuer, which
// makes the jobs of a node that died available again once they have run
// for RescueAfter, never takes over a job that is still running: the work
// of a dead node is taken over within about two minutes (RescueAfter plus
// the rescuer's pass), and a live node's work is never done twice.
const (
	JobTimeout  = 60 * time.Second
	RescueAfter = 90 * time.Second
	sendSlice   = 30 * time.Second
)

// slowPoll is how often idle workers of the scheduled and default queues
// look for jobs at most: scheduled fan-outs are made due early and wait in
// process anyway, and a push's finish or a webhook can wait a second.
const slowPoll = time.Second

// RiverConfig returns River's configuration for delivery's jobs: queues,
// workers, timeouts and the rescuer. pollInterval is how often idle
// fan-out and send workers look for new jobs (the other queues look at
// most once a second, slowPoll): on SQLite, which cannot notify them, each
// look is a write on the one writer, so it is a trade between how soon a
// push starts and what an idle server spends; on PostgreSQL LISTEN/NOTIFY
// wakes them and polling is only a fallback. Busy workers do not wait for
// it: River fetches again as soon as a job ends.
func (s *Service) RiverConfig(pollInterval time.Duration, logger *slog.Logger) *river.Config {
	queues := Queues()
	for _, name := range []string{QueueScheduled, river.QueueDefault} {
		q := queues[name]
		q.FetchPollInterval = max(pollInterval, slowPoll)
		queues[name] = q
	}
	return &river.Config{
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
