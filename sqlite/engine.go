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
// pool, transactions on the one writer, statements prepared once (see
// stmts).
type engine struct{ db *DB }

func (e engine) Reader() sqlstore.Querier {
	st := e.db.readStmts
	return querier{q: e.db.Reader, stmt: func(ctx context.Context, query string) *sql.Stmt {
		kept, _ := st.prepare(ctx, query) // on an error, the query runs unprepared and reports it
		return kept
	}}
}

// InTx runs fn in a transaction on the writer, its turn given by the gate
// (API requests before bulk delivery work). Statements not kept yet run
// unprepared there, the writer's one connection being the transaction's,
// and are prepared and kept once it has ended.
//
// Transactions marked sqlstore.IsBatched (and not bulk) may share their
// commit with others queued at the same time (see batch).
func (e engine) InTx(ctx context.Context, fn func(sqlstore.Tx) error) error {
	if sqlstore.IsBatched(ctx) && !sqlstore.IsBulk(ctx) {
		return e.db.batch.run(ctx, e.db, fn)
	}
	if err := e.db.gate.enter(ctx, sqlstore.IsBulk(ctx)); err != nil {
		return err
	}
	defer e.db.gate.leave()
	tx, err := e.db.Writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	t := &txn{tx: tx, queue: e.db.Queue, kept: e.db.writeStmts}
	t.querier = querier{q: tx, stmt: t.stmt}
	if err = fn(t); err != nil {
		tx.Rollback()
	} else {
		err = tx.Commit()
	}
	e.db.keepMissed(ctx, t)
	return err
}

// keepMissed prepares and keeps the statements t ran unprepared, once t
// has ended (the writer's one connection is then free).
func (db *DB) keepMissed(ctx context.Context, t *txn) {
	for _, query := range t.missed {
		db.writeStmts.prepare(context.WithoutCancel(ctx), query) // best effort: a failure leaves it unprepared
	}
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

// querier runs the shared SQL as it is (SQLite takes its dialect),
// through a kept statement when stmt has one.
type querier struct {
	q    dbtx
	stmt func(ctx context.Context, query string) *sql.Stmt
}

func (q querier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	var res sql.Result
	var err error
	if st := q.stmt(ctx, query); st != nil {
		res, err = st.ExecContext(ctx, args...)
	} else {
		res, err = q.q.ExecContext(ctx, query, args...)
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (q querier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	var r *sql.Rows
	var err error
	if st := q.stmt(ctx, query); st != nil {
		r, err = st.QueryContext(ctx, args...)
	} else {
		r, err = q.q.QueryContext(ctx, query, args...)
	}
	return rows{r}, err
}

func (q querier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	if st := q.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
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
	kept  *stmts
	// missed are the statements this transaction ran that were not kept.
	missed []string
}

// stmt returns the kept statement for query, bound to the transaction,
// or nil (noting the miss).
func (t *txn) stmt(ctx context.Context, query string) *sql.Stmt {
	if st := t.kept.kept(query); st != nil {
		return t.tx.StmtContext(ctx, st)
	}
	t.missed = append(t.missed, query)
	return nil
}

// ExecMany runs query for each argument list on one prepared statement.
func (t *txn) ExecMany(ctx context.Context, query string, args [][]any) ([]int64, error) {
	stmt := t.stmt(ctx, query)
	if stmt == nil {
		var err error
		if stmt, err = t.tx.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
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
