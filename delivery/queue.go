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

// RiverConfig returns River's configuration for delivery's jobs: queues,
// workers, timeouts and the rescuer. pollInterval is how often idle workers
// look for jobs: short on SQLite, which cannot notify them; on PostgreSQL
// LISTEN/NOTIFY wakes them and polling is only a fallback.
func (s *Service) RiverConfig(pollInterval time.Duration, logger *slog.Logger) *river.Config {
	return &river.Config{
		Queues:               Queues(),
		Workers:              s.Workers(),
		FetchPollInterval:    pollInterval,
		FetchCooldown:        min(pollInterval, 10*time.Millisecond),
		JobTimeout:           JobTimeout,
		RescueStuckJobsAfter: RescueAfter,
		Logger:               logger,
	}
}
