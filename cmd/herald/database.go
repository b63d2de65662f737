package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald/delivery"
	"github.com/heraldpush/herald/postgres"
	"github.com/heraldpush/herald/sqlite"
	"github.com/heraldpush/herald/sqlstore"
	"github.com/heraldpush/herald/web"
)

// database is the store's engine, SQLite or PostgreSQL, chosen once when
// the store is opened (openStore); the service uses it only through this.
type database interface {
	// MigrateUp applies the migrations not yet applied and counts them.
	MigrateUp(ctx context.Context) (int, error)
	// Ready reports whether the store can serve (reachable, migrated,
	// writable); Recheck probes that afresh.
	Ready(ctx context.Context) error
	Recheck(ctx context.Context) error
	// SchemaVersion is the database's schema version and this binary's.
	SchemaVersion(ctx context.Context) (sqlstore.SchemaVersion, error)
	// StartQueue starts River on the database, its jobs inserted in the
	// store's transactions.
	StartQueue(ctx context.Context, config func(poll time.Duration) *river.Config, log *slog.Logger) (sqlstore.QueueRunner, error)
	// JobsDB is the handle the job metrics read River's table through.
	JobsDB() *sql.DB
	// Name is the engine's name (/readyz); Describe says where the data
	// is (the start-up line); Shared whether several nodes use it.
	Name() string
	Describe() string
	Shared() bool
	Close() error
}

var (
	_ database = (*sqlite.DB)(nil)
	_ database = (*postgres.DB)(nil)
)

// openStore opens and migrates the configured engine: PostgreSQL when a
// database URL is set, else the embedded SQLite store in the data dir.
func (s *service) openStore(ctx context.Context) error {
	db, err := s.openEngine(ctx)
	if err != nil {
		return err
	}
	s.db = db
	s.migrated, err = db.MigrateUp(ctx)
	return err
}

// openEngine opens the configured engine and sets the service's store on
// it; for SQLite it first takes the data dir's lock.
func (s *service) openEngine(ctx context.Context) (database, error) {
	if s.cfg.DatabaseURL != "" {
		db, err := postgres.Open(ctx, s.cfg.DatabaseURL)
		if err != nil {
			return nil, err
		}
		s.store = db.Store
		return db, nil
	}
	lock, err := sqlite.LockDir(s.cfg.DataDir)
	if err != nil {
		return nil, err
	}
	s.lock = lock
	if err := os.MkdirAll(s.cfg.DataDir, 0o700); err != nil {
		return nil, err
	}
	db, err := sqlite.Open(ctx, filepath.Join(s.cfg.DataDir, "herald.db"))
	if err != nil {
		return nil, err
	}
	s.store = db.Store
	return db, nil
}

// ready reports whether the store can serve (reachable, migrated,
// writable) and names its engine, for /readyz (whose handler is made once
// the store is open).
func (s *service) ready(ctx context.Context) web.Readiness {
	state := web.Readiness{Database: s.db.Name(), Err: s.db.Ready(ctx)}
	if s.outage != nil {
		s.outage.observe(state.Err, nil)
	}
	return state
}

// probeStore probes the open engine's readiness afresh, for the outage
// watcher (nil before one is open).
func (s *service) probeStore(ctx context.Context) error {
	if s.db == nil {
		return nil
	}
	return s.db.Recheck(ctx)
}

// startQueue starts River on the store's database (see the engines'
// StartQueue), configured for the delivery service's workers.
func (s *service) startQueue(ctx context.Context, pushes *delivery.Service) error {
	logger := slog.New(s.outage.quiet(s.cfg.loggerAt(s.logOut, slog.LevelWarn).Handler(), true))
	q, err := s.db.StartQueue(ctx, func(poll time.Duration) *river.Config {
		rc := pushes.RiverConfig(poll, logger)
		if s.cfg.riverNow != nil {
			rc.Test.Time = riverClock(s.cfg.riverNow)
		}
		return rc
	}, s.log)
	if q != nil {
		s.queue = q
	}
	return err
}

// riverClock is a clock given to River (rivertype.TimeGenerator).
type riverClock func() time.Time

// Now reads the clock.
func (c riverClock) Now() time.Time { return c() }

// NowOrNil reads the clock: River then writes its time to the database
// instead of the database's own.
func (c riverClock) NowOrNil() *time.Time { t := c(); return &t }

// closeStore closes the engine, when one is open.
func (s *service) closeStore() error {
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}

// newerSchema describes a database a newer herald migrated, for the
// warning serve and migrate give: "" when the schema is this binary's.
func (s *service) newerSchema(ctx context.Context) string {
	v, err := s.db.SchemaVersion(ctx)
	if err != nil || !v.Newer() {
		return ""
	}
	return fmt.Sprintf("the database schema is at version %d, newer than this binary's %d: a newer herald migrated it, and this one may not work with it (finish the upgrade, see docs/operations.md)", v.Database, v.Binary)
}
