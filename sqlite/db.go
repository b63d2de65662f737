// Package sqlite is Herald's embedded store: herald's store interfaces on
// SQLite (modernc.org/sqlite, pure Go), with River's tables in the same file.
//
// How a write reaches the database: SQLite takes one writer at a time, so
// every write goes through DB.Writer, a pool of one connection. The
// store's transactions first wait in one queue, the writer's scheduler (a
// sqlstore.Group of one lane, see newWriter), which runs one transaction
// at a time: those answering requests (an accept, a registration, a
// device's events) before bulk delivery work (fan-out pages, chunk
// steps, outcomes; sqlstore.TxOptions.Bulk), each kind in order of
// arrival, and those that may share a commit (sqlstore.TxOptions.Batched:
// registrations, device updates, events) several in one. The connection
// is then free for it, but when River holds it: River's client writes
// through database/sql on the same pool (fetching and completing jobs),
// outside the scheduler, and a store transaction waits for at most the
// River transaction running. Migrations and ReclaimJobs (at start) and
// the readiness probe's heartbeat write use the pool directly too.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sync/atomic"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/heraldpush/herald/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is an open Herald database: the shared SQL store (package sqlstore)
// on SQLite. All writes (ours, queued in the writer's scheduler, and
// River's) go through Writer, a pool of one connection; reads use Reader,
// a pool of several read-only connections that WAL lets run beside the
// writer.
type DB struct {
	// Store holds the queries; its Now is the clock, which tests replace.
	*sqlstore.Store
	Writer *sql.DB
	Reader *sql.DB
	// Queue inserts jobs in the store's transactions; set it before
	// accepting pushes.
	Queue Queue
	path  string
	ready readiness
	// writer is the one queue the store's transactions wait in (see
	// newWriter); writes counts the transactions it has begun (Writes).
	writer *sqlstore.Group
	writes atomic.Uint64
}

// busyTimeout is how long a statement waits for a lock another process
// holds (this process's own writers take turns before SQLite sees them).
// A context does not interrupt SQLite's wait for a lock, so a request can
// take its deadline (web.RequestDeadline, 8 s) plus this: short enough
// that a database locked from outside answers 503 within DESIGN.md
// section 4's 10 s.
const busyTimeout = 1500 * time.Millisecond

// Open opens (creating when absent) the database file at path. A new file
// is made 0600; SQLite gives its -wal and -shm files the same mode.
func Open(ctx context.Context, path string) (*DB, error) {
	if err := create(path, 0o600); err != nil {
		return nil, err
	}
	common := fmt.Sprintf("_pragma=busy_timeout(%d)&", busyTimeout.Milliseconds()) + "_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	// auto_vacuum first: it takes only on a file with no table yet (a new
	// store), which then gives back the pages retention frees in small
	// steps (Reclaim); on an older file it does nothing until a VACUUM
	// (docs/operations.md).
	w, err := openKeeping("file:" + pathEscape(path) + "?_pragma=auto_vacuum(incremental)&" + common + "&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	w.SetConnMaxLifetime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r, err := openKeeping("file:" + pathEscape(path) + "?" + common + "&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(8)
	r.SetMaxIdleConns(8)
	db := &DB{Writer: w, Reader: r, path: path}
	db.writer = newWriter(db)
	db.Store = sqlstore.New(engine{db})
	db.SetMinFreeBytes(defaultMinFree)
	return db, nil
}

// create makes an empty file (an empty SQLite database) with mode unless
// path exists.
func create(path string, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, mode)
	if errors.Is(err, os.ErrExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return f.Close()
}

func pathEscape(p string) string {
	return (&url.URL{Path: p}).EscapedPath()
}

// Close closes both pools.
func (db *DB) Close() error {
	return errors.Join(db.Reader.Close(), db.Writer.Close())
}

// goose returns the migration provider on conn: the writer to migrate, the
// reader to check, so that readiness probes never queue behind writes.
func (db *DB) goose(conn *sql.DB) (*goose.Provider, error) {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(goose.DialectSQLite3, conn, fsys, goose.WithDisableGlobalRegistry(true),
		goose.WithGoMigrations(sqlstore.GoMigrations(func(query string) string { return query })...))
}

// Migrate applies Herald's migrations and River's.
func (db *DB) Migrate(ctx context.Context) error {
	_, err := db.MigrateUp(ctx)
	return err
}

// MigrateUp is Migrate, reporting how many migrations it applied
// (Herald's and River's; none when the schema was current).
func (db *DB) MigrateUp(ctx context.Context) (int, error) {
	p, err := db.goose(db.Writer)
	if err != nil {
		return 0, err
	}
	ours, err := p.Up(ctx)
	if err != nil {
		return len(ours), fmt.Errorf("migrate herald schema: %w", err)
	}
	m, err := rivermigrate.New(riversqlite.New(db.Writer), nil)
	if err != nil {
		return len(ours), err
	}
	res, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return len(ours), fmt.Errorf("migrate river schema: %w", err)
	}
	return len(ours) + len(res.Versions), nil
}

// migrationsCurrent reports an error unless the database answers and no
// migration is pending.
func (db *DB) migrationsCurrent(ctx context.Context) error {
	p, err := db.goose(db.Reader)
	if err != nil {
		return err
	}
	m, err := rivermigrate.New(riversqlite.New(db.Reader), nil)
	if err != nil {
		return err
	}
	return sqlstore.CheckMigrations(ctx, p, m)
}

// ReclaimJobs makes jobs left running by a process that died available
// again, and jobs that fell due while no process ran (a push scheduled
// across a restart) available at once rather than at River's next
// scheduler pass. Only the embedded engine may do this at start: one
// process holds the data directory (see LockDir), so no job is running.
func (db *DB) ReclaimJobs(ctx context.Context) (int64, error) {
	res, err := db.Writer.ExecContext(ctx, `UPDATE river_job SET state = 'available'
		WHERE state = 'running' OR (state = 'scheduled' AND julianday(scheduled_at) <= julianday('now'))`)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// SchemaVersion is the database's schema version and this binary's newest.
func (db *DB) SchemaVersion(ctx context.Context) (sqlstore.SchemaVersion, error) {
	p, err := db.goose(db.Reader)
	if err != nil {
		return sqlstore.SchemaVersion{}, err
	}
	return sqlstore.SchemaVersionOf(ctx, p)
}
