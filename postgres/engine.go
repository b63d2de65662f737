package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sqlstore"
)

// engine is the shared SQL's view of the pool: reads on any connection,
// write transactions at READ COMMITTED.
type engine struct{ db *DB }

// Reader reads on any connection of the pool, a River job's in a slot of
// the work gate; a read whose connection turns out broken is run again
// once (see brokenConn).
func (e engine) Reader() sqlstore.Querier {
	return querier{gated{retryOnce{e.db.Pool}, e.db.work}, &e.db.rb}
}

// InTx runs fn in a transaction at READ COMMITTED. When the connection
// breaks before the commit was sent (brokenConn), nothing was written, and
// the transaction is run again once on a fresh connection: the pool hands
// out connections used within the last second without a ping, so after
// the database ended its sessions (a restart, a failover,
// pg_terminate_backend) the first transaction of each would fail. A
// broken commit is not run again: it may have been applied.
//
// Transactions marked batched (and not bulk) may share their commit with
// others queued at the same time (see newBatch); the others of a River
// job run in a slot of the work gate.
func (e engine) InTx(ctx context.Context, opts sqlstore.TxOptions, fn func(sqlstore.Tx) error) error {
	if opts.Batched && !opts.Bulk {
		return e.db.batch.Run(ctx, opts, fn)
	}
	leave, err := e.db.work.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	var committing bool
	run := func() error {
		committing = false
		return pgx.BeginTxFunc(ctx, e.db.Pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
			if err := fn(txn{querier{tx, &e.db.rb}, tx, e.db.Queue}); err != nil {
				return err
			}
			committing = true
			return nil
		})
	}
	err = run()
	if err != nil && !committing && brokenConn(err) && ctx.Err() == nil {
		e.db.Pool.Reset()
		err = run()
	}
	return err
}

// JoinsRegistrations: a batch's registrations are made together here
// (sqlstore.RegistrationJoiner).
func (engine) JoinsRegistrations() {}

// brokenConn reports whether err says the connection failed rather than
// the statement: the server ended the session (SQLSTATE class 57P:
// administrator command, crash, not accepting connections yet), the
// connection was reset or closed, or pgx knows nothing was sent.
func brokenConn(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "57P")
	}
	return pgconn.SafeToRetry(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed)
}

// retryOnce runs a read on the pool again once when its connection was
// broken: reads change nothing, so running one twice is safe. A query's
// rows are run again only when the first row never came. Before the second
// run the pool drops every connection it holds (Reset): the database ends
// all sessions at once (a restart, a failover), and the next idle
// connection would be as dead as the first.
type retryOnce struct{ pool *pgxpool.Pool }

func (r retryOnce) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := r.pool.Exec(ctx, sql, args...)
	if err != nil && brokenConn(err) && ctx.Err() == nil {
		r.pool.Reset()
		tag, err = r.pool.Exec(ctx, sql, args...)
	}
	return tag, err
}

func (r retryOnce) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	again := func() (pgx.Rows, error) {
		r.pool.Reset()
		return r.pool.Query(ctx, sql, args...)
	}
	rows, err := r.pool.Query(ctx, sql, args...)
	if err != nil && brokenConn(err) && ctx.Err() == nil {
		return again()
	}
	if err != nil {
		return nil, err
	}
	return &retryRows{Rows: rows, again: again}, nil
}

func (r retryOnce) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	again := func() pgx.Row {
		r.pool.Reset()
		return r.pool.QueryRow(ctx, sql, args...)
	}
	return retryRow{first: r.pool.QueryRow(ctx, sql, args...), again: again, ctx: ctx}
}

// retryRow is a row whose Scan runs the query again once on a broken
// connection.
type retryRow struct {
	first pgx.Row
	again func() pgx.Row
	ctx   context.Context
}

func (r retryRow) Scan(dest ...any) error {
	err := r.first.Scan(dest...)
	if err != nil && brokenConn(err) && r.ctx.Err() == nil {
		err = r.again().Scan(dest...)
	}
	return err
}

// retryRows are rows that, when the connection broke before the first row
// came, are the rows of the query run again.
type retryRows struct {
	pgx.Rows
	again func() (pgx.Rows, error)
	seen  bool // a row came, or the query was run again
	err   error
}

func (r *retryRows) Next() bool {
	if r.Rows.Next() {
		r.seen = true
		return true
	}
	if r.seen || !brokenConn(r.Rows.Err()) {
		return false
	}
	r.seen = true
	r.Rows.Close()
	rows, err := r.again()
	if err != nil {
		r.err = err
		return false
	}
	r.Rows = rows
	return r.Rows.Next()
}

func (r *retryRows) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.Rows.Err()
}

// uniqueViolation is PostgreSQL's SQLSTATE for a unique index refusing a
// row; deadlockDetected and serializationFailure those of a transaction
// chosen to lose a race.
const (
	uniqueViolation      = "23505"
	deadlockDetected     = "40P01"
	serializationFailure = "40001"
)

// Translate maps driver errors to the store's, in one place.
func (engine) Translate(err error) error {
	var pe *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return herald.ErrNotFound
	case errors.As(err, &pe) && pe.Code == uniqueViolation:
		return fmt.Errorf("%w: %w", sqlstore.ErrUnique, err)
	case errors.As(err, &pe) && (pe.Code == deadlockDetected || pe.Code == serializationFailure):
		return fmt.Errorf("%w: %w", sqlstore.ErrDeadlock, err)
	case unavailable(err):
		return herald.Unavailable(err)
	}
	return err
}

// unavailable reports a failure of the database rather than of the
// statement: it cannot be reached or the connection broke, it did not
// answer in time, it is shutting down, out of disk or other resources, or
// read-only. A client that went away (context.Canceled) is none of these.
func unavailable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch class := pe.Code[:2]; {
		case class == "08", class == "53", class == "58": // connection exception, insufficient resources, system error
			return true
		case pe.Code == "25006": // read_only_sql_transaction
			return true
		case pe.Code == "57014", pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03": // canceled by a timeout, shutdown, cannot connect now
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || pgconn.Timeout(err) || errors.As(err, &ne) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, context.DeadlineExceeded)
}

// pgxQuerier is what *pgxpool.Pool and pgx.Tx share.
type pgxQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// querier runs the shared SQL with its placeholders rebound.
type querier struct {
	q  pgxQuerier
	rb *rebinder
}

func (q querier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := q.q.Exec(ctx, q.rb.rebind(query), args...)
	return tag.RowsAffected(), err
}

func (q querier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	return q.q.Query(ctx, q.rb.rebind(query), args...)
}

func (q querier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return q.q.QueryRow(ctx, q.rb.rebind(query), args...)
}

// txn is a write transaction with River's queue.
type txn struct {
	querier
	tx    pgx.Tx
	queue Queue
}

// batchSize bounds the statements sent in one round trip.
const batchSize = 1000

// ExecMany sends the runs of query in batches: one round trip for up to
// batchSize of them.
func (t txn) ExecMany(ctx context.Context, query string, args [][]any) ([]int64, error) {
	query = t.rb.rebind(query)
	ns := make([]int64, 0, len(args))
	for start := 0; start < len(args); start += batchSize {
		part := args[start:min(start+batchSize, len(args))]
		b := &pgx.Batch{}
		for _, a := range part {
			b.Queue(query, a...)
		}
		br := t.tx.SendBatch(ctx, b)
		for range part {
			tag, err := br.Exec()
			if err != nil {
				br.Close()
				return ns, err
			}
			ns = append(ns, tag.RowsAffected())
		}
		if err := br.Close(); err != nil {
			return ns, err
		}
	}
	return ns, nil
}

func (t txn) InsertJobs(ctx context.Context, jobs []herald.Job) ([]int64, error) {
	return sqlstore.InsertJobs(ctx, t.queue, t.tx, jobs)
}

func (t txn) CancelJob(ctx context.Context, id int64) error {
	return sqlstore.CancelJob(ctx, t.queue, t.tx, id)
}

// Pipeline sends the statements in one round trip (a pgx batch).
func (t txn) Pipeline(ctx context.Context, stmts []sqlstore.Stmt) error {
	b := &pgx.Batch{}
	t.queueStmts(b, stmts)
	return t.tx.SendBatch(ctx, b).Close()
}

// queueStmts queues the statements, rebound, on b with their callbacks.
func (t txn) queueStmts(b *pgx.Batch, stmts []sqlstore.Stmt) {
	for _, st := range stmts {
		q := b.Queue(t.rb.rebind(st.Query), st.Args...)
		switch {
		case st.Row != nil:
			q.QueryRow(func(r pgx.Row) error { return st.Row(r) })
		case st.Each != nil:
			q.Query(func(rows pgx.Rows) error {
				for rows.Next() {
					if err := st.Each(rows); err != nil {
						return err
					}
				}
				return rows.Err()
			})
		case st.Exec != nil:
			q.Exec(func(tag pgconn.CommandTag) error { return st.Exec(tag.RowsAffected()) })
		}
	}
}

// ForUpdate locks the rows a SELECT reads as an UPDATE of columns of no
// key would (sqlstore.RowLocker): a lock, not a row version.
func (engine) ForUpdate() string { return ` FOR NO KEY UPDATE` }

var _ sqlstore.RowLocker = engine{}
