package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sqlstore"
)

// engine is the shared SQL's view of the pool: reads on any connection,
// write transactions at READ COMMITTED.
type engine struct{ db *DB }

func (e engine) Reader() sqlstore.Querier { return querier{e.db.Pool, &e.db.rb} }

func (e engine) InTx(ctx context.Context, fn func(sqlstore.Tx) error) error {
	return pgx.BeginTxFunc(ctx, e.db.Pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		return fn(txn{querier{tx, &e.db.rb}, tx, e.db.Queue})
	})
}

// uniqueViolation is PostgreSQL's SQLSTATE for a unique index refusing a
// row.
const uniqueViolation = "23505"

// Translate maps driver errors to the store's, in one place.
func (engine) Translate(err error) error {
	var pe *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return herald.ErrNotFound
	case errors.As(err, &pe) && pe.Code == uniqueViolation:
		return fmt.Errorf("%w: %w", sqlstore.ErrUnique, err)
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
