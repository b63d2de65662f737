package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/heraldpush/herald/sqlstore"
)

// pollInterval is how often idle workers look for jobs on PostgreSQL,
// where LISTEN/NOTIFY wakes them when a job is inserted: a fallback only.
const pollInterval = time.Second

// Name is the engine's name, as /readyz reports it.
func (db *DB) Name() string { return "postgres" }

// Describe names the engine and its schema, for the start-up line.
func (db *DB) Describe() string { return fmt.Sprintf("PostgreSQL (schema %s)", db.schema) }

// Shared reports whether several nodes may use the database at once:
// always; they share each app's send rate and fire scheduled pushes
// together.
func (db *DB) Shared() bool { return true }

// JobsDB is the handle the job metrics read River's table through.
func (db *DB) JobsDB() *sql.DB { return db.sqlDB }

// StartQueue starts River on the pool and the store's schema with the
// configuration config makes for this engine's poll interval, its jobs
// inserted in the store's transactions (Queue). LISTEN/NOTIFY wakes the
// workers, and the jobs of a node that died are rescued by the others
// (delivery.RescueAfter); log is not needed. River runs on a context its
// caller's cancelling does not end: that would cancel running jobs
// mid-send; stop it with the QueueRunner.
func (db *DB) StartQueue(ctx context.Context, config func(poll time.Duration) *river.Config, _ *slog.Logger) (sqlstore.QueueRunner, error) {
	rc := config(pollInterval)
	rc.Schema = db.schema
	q, err := river.NewClient(riverpgxv5.New(db.Pool), rc)
	if err != nil {
		return nil, err
	}
	db.Queue = q
	return q, q.Start(context.WithoutCancel(ctx))
}
