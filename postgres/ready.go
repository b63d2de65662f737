package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/heraldpush/herald/sqlstore"
)

// probeTimeout bounds each step of a readiness probe.
const probeTimeout = 2 * time.Second

// Unready is why the store cannot take traffic (see sqlstore.Unready).
type Unready = sqlstore.Unready

// Ready reports an *Unready error unless the database answers, no migration
// is pending and a write commits; the error says how far the probe got
// (Unready.Migrations). The answer is cached for a second;
// concurrent callers share one probe.
func (db *DB) Ready(ctx context.Context) error {
	return db.ready.Check(ctx, db.probe)
}

// Recheck is Ready probing again, without the cached answer (see
// sqlstore.Readiness.Recheck).
func (db *DB) Recheck(ctx context.Context) error {
	return db.ready.Recheck(ctx, db.probe)
}

func (db *DB) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if err := db.Pool.Ping(ctx); err != nil {
		return sqlstore.NewUnready("database unreachable", sqlstore.MigrationsUnknown, err)
	}
	if err := db.migrationsCurrent(ctx); err != nil {
		reason := "database migrations are not current"
		if !errors.Is(err, sqlstore.ErrMigrationsPending) && unavailable(err) {
			reason = "database unreachable" // the connection broke during the check
		}
		return sqlstore.NewUnready(reason, sqlstore.MigrationState(err), err)
	}
	if err := db.probeWrite(ctx); err != nil {
		return sqlstore.NewUnready("database cannot take writes: "+writeFailure(err), sqlstore.MigrationsCurrent, err)
	}
	return nil
}

// probeWrite commits an upsert of the heartbeat row. Every node writes the
// same row; a write is what a read-only standby or a full disk refuses.
func (db *DB) probeWrite(ctx context.Context) error {
	_, err := db.Pool.Exec(ctx, `INSERT INTO meta (name, value, updated_at) VALUES ('heartbeat', '', $1)
		ON CONFLICT (name) DO UPDATE SET updated_at = excluded.updated_at`, time.Now().UnixMilli())
	return err
}

// writeFailure names a failed write's cause in a few words, by its
// SQLSTATE class.
func writeFailure(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "25006": // read_only_sql_transaction: a standby, or default_transaction_read_only
			return "read-only"
		case pe.Code == "53100": // disk_full
			return "disk full"
		case pe.Code[:2] == "53": // insufficient resources
			return "out of resources"
		case pe.Code == "55P03" || pe.Code == "40P01": // lock_not_available, deadlock_detected
			return "database is locked"
		case pe.Code[:2] == "58": // system error (I/O)
			return "I/O error"
		case pe.Code[:2] == "XX": // internal error, data corruption among them
			return "database error"
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "the database did not answer within " + probeTimeout.String()
	}
	return "write failed"
}
