package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"

	"github.com/jackc/pgx/v5"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/heraldpush/herald/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// lockID is the advisory lock that serialises migrations of one schema,
// derived from its name so that databases holding several schemas (tests
// give each their own) do not wait on one another's.
func (db *DB) lockID(what string) int64 {
	h := fnv.New64a()
	h.Write([]byte("herald " + what + " migrations\x00" + db.schema))
	return int64(h.Sum64())
}

// goose returns the migration provider; with locked, it takes the schema's
// session lock while it migrates, so nodes starting together migrate once:
// the others wait for it (retrying each second, up to ten minutes) and then
// find nothing to do.
func (db *DB) goose(locked bool) (*goose.Provider, error) {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true), goose.WithGoMigrations(sqlstore.GoMigrations(rebind)...)}
	if locked {
		l, err := lock.NewPostgresSessionLocker(lock.WithLockID(db.lockID("goose")), lock.WithLockTimeout(1, 600))
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(l))
	}
	return goose.NewProvider(goose.DialectPostgres, db.sqlDB, fsys, opts...)
}

// river returns River's migrator on the store's schema.
func (db *DB) river() (*rivermigrate.Migrator[pgx.Tx], error) {
	return rivermigrate.New(riverpgxv5.New(db.Pool), &rivermigrate.Config{Schema: db.schema})
}

// Migrate applies Herald's migrations and River's, each under a lock of the
// schema's, so that nodes starting together migrate once.
func (db *DB) Migrate(ctx context.Context) error {
	_, err := db.MigrateUp(ctx)
	return err
}

// MigrateUp is Migrate, reporting how many migrations it applied
// (Herald's and River's; none when the schema was current).
func (db *DB) MigrateUp(ctx context.Context) (int, error) {
	p, err := db.goose(true)
	if err != nil {
		return 0, err
	}
	ours, err := p.Up(ctx)
	if err != nil {
		return len(ours), fmt.Errorf("migrate herald schema: %w", err)
	}
	m, err := db.river()
	if err != nil {
		return len(ours), err
	}
	// River's migrator takes no lock of its own, and runs each migration
	// in a transaction of its own (one adds an enum value a later one
	// uses): hold a session lock on a connection of its own meanwhile, so
	// a second node waits and then finds the migrations done.
	var river int
	err = db.withSessionLock(ctx, db.lockID("river"), func() error {
		res, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
		if res != nil {
			river = len(res.Versions)
		}
		return err
	})
	if err != nil {
		return len(ours) + river, fmt.Errorf("migrate river schema: %w", err)
	}
	return len(ours) + river, nil
}

// withSessionLock runs fn while a connection of the pool holds the
// advisory lock id.
func (db *DB) withSessionLock(ctx context.Context, id int64, fn func() error) error {
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, id); err != nil {
		return err
	}
	ferr := fn()
	// Unlock even when ctx has ended; a connection that cannot unlock
	// is closed, which releases its session's locks.
	if _, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, id); err != nil {
		conn.Conn().Close(context.WithoutCancel(ctx))
		return errors.Join(ferr, err)
	}
	return ferr
}

// migrationsCurrent reports an error unless no migration, Herald's or
// River's, is pending.
func (db *DB) migrationsCurrent(ctx context.Context) error {
	p, err := db.goose(false)
	if err != nil {
		return err
	}
	m, err := db.river()
	if err != nil {
		return err
	}
	return sqlstore.CheckMigrations(ctx, p, m)
}

// SchemaVersion is the database's schema version and this binary's newest.
func (db *DB) SchemaVersion(ctx context.Context) (sqlstore.SchemaVersion, error) {
	p, err := db.goose(false)
	if err != nil {
		return sqlstore.SchemaVersion{}, err
	}
	return sqlstore.SchemaVersionOf(ctx, p)
}
