package server

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald/postgres"
	"github.com/heraldpush/herald/sqlite"
	"github.com/heraldpush/herald/sqlstore"
)

// Engine is the store's database, SQLite or PostgreSQL, chosen once when
// the store is opened (Open); the server uses it only through this.
type Engine interface {
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
	_ Engine = (*sqlite.DB)(nil)
	_ Engine = (*postgres.DB)(nil)
)

// Open opens the engine (PostgreSQL when databaseURL is set, else SQLite
// at sqlitePath, whose directory the caller has locked) and migrates it;
// migrated counts the migrations applied. On error the engine, when it
// was opened, is returned for the caller to close.
func Open(ctx context.Context, databaseURL, sqlitePath string) (db Engine, store *sqlstore.Store, migrated int, err error) {
	if databaseURL != "" {
		pg, err := postgres.Open(ctx, databaseURL)
		if err != nil {
			return nil, nil, 0, err
		}
		db, store = pg, pg.Store
	} else {
		lite, err := sqlite.Open(ctx, sqlitePath)
		if err != nil {
			return nil, nil, 0, err
		}
		db, store = lite, lite.Store
	}
	migrated, err = db.MigrateUp(ctx)
	return db, store, migrated, err
}

// NewerSchema describes a database a newer herald migrated, for the
// warning serve and migrate give: "" when the schema is this binary's.
func NewerSchema(ctx context.Context, db Engine) string {
	v, err := db.SchemaVersion(ctx)
	if err != nil || !v.Newer() {
		return ""
	}
	return fmt.Sprintf("the database schema is at version %d, newer than this binary's %d: a newer herald migrated it, and this one may not work with it (finish the upgrade, see docs/operations.md)", v.Database, v.Binary)
}

// riverClock is a clock given to River (rivertype.TimeGenerator).
type riverClock func() time.Time

// Now reads the clock.
func (c riverClock) Now() time.Time { return c() }

// NowOrNil reads the clock: River then writes its time to the database
// instead of the database's own.
func (c riverClock) NowOrNil() *time.Time { t := c(); return &t }
