package sqlite

import (
	"context"
	"database/sql"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"github.com/heraldpush/herald/sqlstore"
)

// pollInterval is how often idle fan-out and send workers look for jobs
// on SQLite, each look a write on the one writer. It is River's fallback:
// its SQLite driver wakes them itself for a job made due (an insert, or
// its scheduler moving a job due, adds a row to its notification table,
// which its listener reads every 50 ms). A quarter second is 10 looks a
// second when idle instead of the 80 of a 50 ms poll (an idle server
// spent 67 ms of CPU a second on them; see delivery.RiverConfig for the
// other queues).
const pollInterval = 250 * time.Millisecond

// Name is the engine's name, as /readyz reports it.
func (db *DB) Name() string { return "sqlite" }

// Describe names the engine and where its data is, for the start-up line.
func (db *DB) Describe() string { return "SQLite in " + filepath.Dir(db.path) }

// Shared reports whether several nodes may use the database at once:
// never, one process holds the data directory (LockDir).
func (db *DB) Shared() bool { return false }

// JobsDB is the handle the job metrics read River's table through.
func (db *DB) JobsDB() *sql.DB { return db.Reader }

// StartQueue starts River on the writer with the configuration config
// makes for this engine's poll interval, its jobs inserted in the store's
// transactions (Queue). Jobs a crash left running are reclaimed first (one
// process holds the data dir, so none is running), logged on log. River
// runs on a context its caller's cancelling does not end: that would
// cancel running jobs mid-send; stop it with the QueueRunner.
func (db *DB) StartQueue(ctx context.Context, config func(poll time.Duration) *river.Config, log *slog.Logger) (sqlstore.QueueRunner, error) {
	if n, err := db.ReclaimJobs(ctx); err != nil {
		return nil, err
	} else if n > 0 {
		log.Info("reclaimed jobs left running by an earlier process", "jobs", n)
	}
	q, err := river.NewClient(riversqlite.New(db.Writer), config(pollInterval))
	if err != nil {
		return nil, err
	}
	db.Queue = q
	return q, q.Start(context.WithoutCancel(ctx))
}
