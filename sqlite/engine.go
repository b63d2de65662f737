package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sqlstore"
)

// Queue is the part of River's client the store uses to insert jobs in its
// own transactions.
type Queue = sqlstore.Queue[*sql.Tx]

// engine is the shared SQL's view of the database: reads on the reader
// pool, transactions on the one writer, each statement compiled once per
// connection (see openKeeping).
type engine struct{ db *DB }

func (e engine) Reader() sqlstore.Querier { return querier{e.db.Reader} }

// InTx runs fn in a transaction on the writer, queued in the writer's
// scheduler (see newWriter).
func (e engine) InTx(ctx context.Context, opts sqlstore.TxOptions, fn func(sqlstore.Tx) error) error {
	return e.db.writer.Run(ctx, opts, fn)
}

// Translate maps driver errors to the store's, in one place.
func (engine) Translate(err error) error {
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return herald.ErrNotFound
	case err != nil && isUniqueViolation(err):
		return fmt.Errorf("%w: %w", sqlstore.ErrUnique, err)
	case unavailable(err):
		return herald.Unavailable(err)
	}
	return err
}

// unavailable reports a failure of the database file rather than of the
// statement: the disk is full, the file read-only or unreadable, or the
// writer stayed locked past the busy timeout.
func unavailable(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff { // the primary code of an extended one
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN,
		sqlite3.SQLITE_PERM, sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return true
	}
	return false
}

// isUniqueViolation reports a UNIQUE or PRIMARY KEY constraint failure.
func isUniqueViolation(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code()
		return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// dbtx is what *sql.DB and *sql.Tx share.
type dbtx interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// querier runs the shared SQL as it is (SQLite takes its dialect); the
// connection keeps the statements compiled (see openKeeping).
type querier struct{ q dbtx }

func (q querier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (q querier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	r, err := q.q.QueryContext(ctx, query, args...)
	return rows{r}, err
}

func (q querier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return q.q.QueryRowContext(ctx, query, args...)
}

// rows is *sql.Rows with a Close that returns nothing (Err reports).
type rows struct{ *sql.Rows }

func (r rows) Close() { r.Rows.Close() }

// txn is a write transaction with River's queue.
type txn struct {
	querier
	tx    *sql.Tx
	queue Queue
}

// newTxn is the store's view of tx.
func newTxn(tx *sql.Tx, queue Queue) *txn { return &txn{querier: querier{tx}, tx: tx, queue: queue} }

// ExecMany runs query for each argument list on one prepared statement
// (the connection's kept one: see keepingConn.PrepareContext).
func (t *txn) ExecMany(ctx context.Context, query string, args [][]any) ([]int64, error) {
	stmt, err := t.tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer stmt.Close()
	ns := make([]int64, 0, len(args))
	for _, a := range args {
		res, err := stmt.ExecContext(ctx, a...)
		if err != nil {
			return ns, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return ns, err
		}
		ns = append(ns, n)
	}
	return ns, nil
}

func (t *txn) InsertJobs(ctx context.Context, jobs []herald.Job) ([]int64, error) {
	return sqlstore.InsertJobs(ctx, t.queue, t.tx, jobs)
}

func (t *txn) CancelJob(ctx context.Context, id int64) error {
	return sqlstore.CancelJob(ctx, t.queue, t.tx, id)
}

// Pipeline runs the statements one after another: SQLite is in process.
func (t *txn) Pipeline(ctx context.Context, stmts []sqlstore.Stmt) error {
	return sqlstore.SerialPipeline(ctx, t, stmts)
}
