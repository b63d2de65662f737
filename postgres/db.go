// Package postgres is Herald's store on PostgreSQL, for several `herald
// serve` processes on one database: the shared SQL store (package
// sqlstore) through pgx v5 and a connection pool, with River's tables in
// the same schema and its jobs inserted in the store's transactions.
// Transactions run at READ COMMITTED; every transition is a guarded write
// (see sqlstore), so no correctness rests on a single writer.
//
// How a write reaches the database: a transaction that may share its
// commit (sqlstore.TxOptions.Batched: registrations, device updates,
// events) waits in the group commit's queue (a sqlstore.Group of lanes
// batches at once, see newBatch), its batch then for a connection of the
// pool; any other takes a connection of the pool at once. The database
// runs them side by side, so no write waits for another's turn, only for
// the rows it locks: bulk work needs no queue of its own behind requests,
// as it does on SQLite's one writer. River's client takes connections of
// the same pool; its jobs' statements hold no more of them at once than
// leave a reserve to the rest (see workGate), so that jobs waiting on a
// lock cannot keep requests from the database.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/heraldpush/herald/sqlstore"
)

// defaultMaxConns is the pool size when the URL names none (pool_max_conns).
const defaultMaxConns = 16

// Queue is the part of River's client (on riverpgxv5) the store uses to
// insert jobs in its own transactions.
type Queue = sqlstore.Queue[pgx.Tx]

// DB is an open Herald database on PostgreSQL.
type DB struct {
	// Store holds the queries; its Now is the clock, which tests replace.
	*sqlstore.Store
	// Pool is the connection pool; River's driver (riverpgxv5) takes it.
	Pool *pgxpool.Pool
	// Queue inserts jobs in the store's transactions; set it before
	// accepting pushes.
	Queue  Queue
	sqlDB  *sql.DB // the pool as database/sql, for goose
	schema string
	rb     rebinder
	// batch commits the transactions that may share a commit together:
	// the one queue a write may wait in before the pool's.
	batch *sqlstore.Group
	// work bounds the connections River's jobs hold (see workGate).
	work  workGate
	ready sqlstore.Readiness
}

// Open connects to the database at url (postgres://… or key=value; pgx's
// parameters apply, pool_max_conns among them) and returns its store. The
// tables live in the first schema of the connection's search_path, which
// must exist; call Migrate before use.
func Open(ctx context.Context, url string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", err)
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "herald"
	}
	if !strings.Contains(url, "pool_max_conns") {
		// pgx's default (4 on a small machine) starves the 14 delivery
		// workers, River's own connections and the API.
		cfg.MaxConns = defaultMaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	var schema *string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open database %s@%s/%s: %w", cfg.ConnConfig.User, cfg.ConnConfig.Host, cfg.ConnConfig.Database, err)
	}
	if schema == nil {
		pool.Close()
		return nil, errors.New("open database: no schema of the search_path exists")
	}
	db := &DB{Pool: pool, sqlDB: stdlib.OpenDBFromPool(pool), schema: *schema, work: newWorkGate(cfg.MaxConns)}
	db.batch = newBatch(db, lanes)
	db.Store = sqlstore.New(engine{db})
	return db, nil
}

// Schema is the schema holding Herald's and River's tables; River's client
// and migrator take it (river.Config.Schema).
func (db *DB) Schema() string { return db.schema }

// SQL is the pool as a database/sql handle, for read-only queries of
// River's tables (the job metrics).
func (db *DB) SQL() *sql.DB { return db.sqlDB }

// Close closes the pool.
func (db *DB) Close() error {
	err := db.sqlDB.Close()
	db.Pool.Close()
	return err
}
