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
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"github.com/heraldpush/herald/delivery"
	"github.com/heraldpush/herald/postgres"
	"github.com/heraldpush/herald/sqlite"
	"github.com/heraldpush/herald/sqlstore"
	"github.com/heraldpush/herald/web"
)

// queue is River's client on either engine, as shutdown sees it.
type queue interface {
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
}

// pgPollInterval is how often idle workers look for jobs on PostgreSQL,
// where LISTEN/NOTIFY wakes them when a job is inserted: a fallback only.
const pgPollInterval = time.Second

// sqlitePollInterval is how often idle fan-out and send workers look for
// jobs on SQLite, where nothing can wake them and every look is a write on
// the one writer: at most a quarter second before an accepted push starts
// and before its chunks start, for 10 looks a second when idle instead of
// the 80 of a 50 ms poll (an idle server spent 67 ms of CPU a second on
// them; see delivery.RiverConfig for the other queues).
const sqlitePollInterval = 250 * time.Millisecond

// openStore opens and migrates the configured engine: PostgreSQL when a
// database URL is set, else the embedded SQLite store in the data dir.
func (s *service) openStore(ctx context.Context) error {
	if s.cfg.DatabaseURL != "" {
		db, err := postgres.Open(ctx, s.cfg.DatabaseURL)
		if err != nil {
			return err
		}
		s.pg, s.store = db, db.Store
		s.migrated, err = db.MigrateUp(ctx)
		return err
	}
	lock, err := sqlite.LockDir(s.cfg.DataDir)
	if err != nil {
		return err
	}
	s.lock = lock
	db, migrated, err := openDB(ctx, s.cfg)
	if err != nil {
		return err
	}
	s.db, s.store, s.migrated = db, db.Store, migrated
	return nil
}

// openDB opens and migrates the embedded SQLite store in the data dir; it
// reports how many migrations it applied.
func openDB(ctx context.Context, cfg config) (*sqlite.DB, int, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, 0, err
	}
	db, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, "herald.db"))
	if err != nil {
		return nil, 0, err
	}
	migrated, err := db.MigrateUp(ctx)
	if err != nil {
		db.Close()
		return nil, 0, err
	}
	return db, migrated, nil
}

// ready reports whether the store can serve (reachable, migrated,
// writable) and names its engine, for /readyz.
func (s *service) ready(ctx context.Context) web.Readiness {
	state := web.Readiness{Database: "sqlite"}
	if s.pg != nil {
		state.Database = "postgres"
	}
	switch {
	case s.pg != nil:
		state.Err = s.pg.Ready(ctx)
	case s.db != nil:
		state.Err = s.db.Ready(ctx)
	}
	if s.outage != nil {
		s.outage.observe(state.Err, nil)
	}
	return state
}

// probeStore probes the open engine's readiness afresh, for the outage
// watcher (nil before one is open).
func (s *service) probeStore(ctx context.Context) error {
	switch {
	case s.pg != nil:
		return s.pg.Recheck(ctx)
	case s.db != nil:
		return s.db.Recheck(ctx)
	}
	return nil
}

// startQueue starts River on the store's database, its jobs inserted in the
// store's transactions. On SQLite jobs left running by a crash are
// reclaimed first (one process holds the data dir, so none is running) and
// workers poll (sqlitePollInterval); on PostgreSQL LISTEN/NOTIFY wakes them,
// and the jobs of a node that died are rescued by the others
// (delivery.RescueAfter).
func (s *service) startQueue(ctx context.Context, pushes *delivery.Service) error {
	logger := slog.New(s.outage.quiet(s.cfg.loggerAt(s.logOut, slog.LevelWarn).Handler(), true))
	// Not the signal's context: cancelling it would cancel running jobs
	// mid-send; shutdown stops River gracefully instead.
	runCtx := context.WithoutCancel(ctx)
	if s.pg != nil {
		rc := pushes.RiverConfig(pgPollInterval, logger)
		rc.Schema = s.pg.Schema()
		q, err := river.NewClient(riverpgxv5.New(s.pg.Pool), rc)
		if err != nil {
			return err
		}
		s.pg.Queue, s.queue = q, q
		return q.Start(runCtx)
	}
	if n, err := s.db.ReclaimJobs(ctx); err != nil {
		return err
	} else if n > 0 {
		s.log.Info("reclaimed jobs left running by an earlier process", "jobs", n)
	}
	q, err := river.NewClient(riversqlite.New(s.db.Writer), pushes.RiverConfig(sqlitePollInterval, logger))
	if err != nil {
		return err
	}
	s.db.Queue, s.queue = q, q
	return q.Start(runCtx)
}

// jobsDB is the handle the job metrics read River's table through.
func (s *service) jobsDB() *sql.DB {
	if s.pg != nil {
		return s.pg.SQL()
	}
	return s.db.Reader
}

// closeStore closes whichever engine is open.
func (s *service) closeStore() error {
	switch {
	case s.pg != nil:
		return s.pg.Close()
	case s.db != nil:
		return s.db.Close()
	}
	return nil
}

// describe names the engine for the start-up line.
func (s *service) describe() string {
	if s.pg != nil {
		return fmt.Sprintf("PostgreSQL (schema %s)", s.pg.Schema())
	}
	return "SQLite in " + s.cfg.DataDir
}

// schemaVersion is the engine's schema version and this binary's newest.
func (s *service) schemaVersion(ctx context.Context) (sqlstore.SchemaVersion, error) {
	if s.pg != nil {
		return s.pg.SchemaVersion(ctx)
	}
	return s.db.SchemaVersion(ctx)
}

// newerSchema describes a database a newer herald migrated, for the
// warning serve and migrate give: "" when the schema is this binary's.
func (s *service) newerSchema(ctx context.Context) string {
	v, err := s.schemaVersion(ctx)
	if err != nil || !v.Newer() {
		return ""
	}
	return fmt.Sprintf("the database schema is at version %d, newer than this binary's %d: a newer herald migrated it, and this one may not work with it (finish the upgrade, see docs/operations.md)", v.Database, v.Binary)
}
