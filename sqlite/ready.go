package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/heraldpush/herald/sqlstore"
)

const (
	// probeTimeout bounds one write probe, including the wait for a lock
	// another process holds (busy_timeout would otherwise wait busyTimeout).
	probeTimeout = 2 * time.Second
	// defaultMinFree is the free space below which the data directory's
	// file system counts as full: the WAL can then no longer grow.
	defaultMinFree = 1 << 20
)

// readiness caches the last readiness probe.
type readiness struct {
	sqlstore.Readiness
	minFree atomic.Uint64
}

// Unready is why the store cannot take traffic: a short reason safe to
// answer to anyone (web.Health does), and the cause, for the log.
type Unready = sqlstore.Unready

// SetMinFreeBytes sets the free space of the data directory's file system
// below which the store is not ready (default 1 MiB).
func (db *DB) SetMinFreeBytes(n uint64) { db.ready.minFree.Store(n) }

// Ready reports an *Unready error unless the database answers, no migration
// is pending, the file system has room and a write commits; the error says
// how far the probe got (Unready.Migrations). The answer is
// cached for a second; concurrent callers share one probe.
func (db *DB) Ready(ctx context.Context) error {
	return db.ready.Check(ctx, db.probe)
}

// Recheck is Ready probing again, without the cached answer (see
// sqlstore.Readiness.Recheck).
func (db *DB) Recheck(ctx context.Context) error {
	return db.ready.Recheck(ctx, db.probe)
}

func (db *DB) probe(ctx context.Context) error {
	if err := db.migrationsCurrent(ctx); err != nil {
		return sqlstore.NewUnready("database migrations are not current", sqlstore.MigrationState(err), err)
	}
	if err := db.checkFreeSpace(); err != nil {
		return err
	}
	if err := db.probeWrite(ctx); err != nil {
		return sqlstore.NewUnready("database cannot take writes: "+writeFailure(err), sqlstore.MigrationsCurrent, err)
	}
	return nil
}

// checkFreeSpace refuses readiness when the data directory's file system
// is (nearly) full: a write probe alone can pass while the WAL reuses
// space it already has, then the next larger commit fails.
func (db *DB) checkFreeSpace() error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(db.path), &st); err != nil {
		return nil // not every file system answers; the write probe still runs
	}
	free, need := st.Bavail*uint64(st.Bsize), db.ready.minFree.Load()
	if free < need {
		return sqlstore.NewUnready("database cannot take writes: disk full", sqlstore.MigrationsCurrent,
			fmt.Errorf("%d bytes free on the data directory's file system, need %d", free, need))
	}
	return nil
}

// probeWrite commits an upsert of the heartbeat row on the writer, with a
// busy timeout shorter than the probe's.
func (db *DB) probeWrite(ctx context.Context) (err error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	conn, err := db.Writer.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Half the probe's time: a lock held elsewhere answers SQLITE_BUSY
	// before the probe's deadline, and is reported as such.
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", probeTimeout.Milliseconds()/2)); err != nil {
		return err
	}
	defer func() {
		// Restore the writer's own busy timeout (Open's), even when ctx
		// has expired.
		_, rerr := conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA busy_timeout = %d", busyTimeout.Milliseconds()))
		err = errors.Join(err, rerr)
	}()
	_, err = conn.ExecContext(ctx, `INSERT INTO meta (name, value, updated_at) VALUES ('heartbeat', x'', ?)
		ON CONFLICT (name) DO UPDATE SET updated_at = excluded.updated_at`, time.Now().UnixMilli())
	return err
}

// writeFailure names a failed write's cause in a few words.
func writeFailure(err error) string {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff { // the primary code of an extended one
		case sqlite3.SQLITE_FULL:
			return "disk full"
		case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN:
			return "read-only"
		case sqlite3.SQLITE_IOERR:
			return "I/O error"
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return "database is locked"
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return "database is corrupt"
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "the writer did not answer within " + probeTimeout.String()
	}
	return "write failed"
}
