package sqlite

import (
	"context"
	"database/sql"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sqlstore"
)

// maxBatch bounds the transactions committed together, so that one batch
// holds the writer no longer than a few ordinary transactions.
const maxBatch = 128

// newWriter is the writer's scheduler (see sqlstore.Group), with one
// lane: every transaction of the store's waits in it, those answering
// requests before bulk delivery work, and those marked batched
// (sqlstore.TxOptions) committed together. Its lane runs one transaction
// at a time, so the one connection of the Writer pool is free for it but
// when River holds it.
func newWriter(db *DB) *sqlstore.Group {
	return sqlstore.NewGroup(func(ctx context.Context, shared bool) (sqlstore.GroupTx, error) {
		db.writes.Add(1)
		tx, err := db.Writer.BeginTx(ctx, nil)
		if err != nil {
			return nil, err
		}
		t := newTxn(tx, db.Queue)
		if shared {
			return writeTx{detached{t}, tx}, nil
		}
		return writeTx{t, tx}, nil
	}, maxBatch, 1)
}

// Writes counts the transactions the writer has begun (a batch that
// commits several together counts once): retention's pacing reads it to
// see whether anything else wrote beside its steps.
func (db *DB) Writes() uint64 { return db.writes.Load() }

// writeTx is a transaction on the writer. Its savepoint statements are
// kept compiled like the store's. SQLite rolls back the whole transaction
// when a write is interrupted, which would take the others' writes with
// it: a shared batch's statements ignore the end of any op's context
// (detached); those of a transaction alone end with its context, as its
// transaction does.
type writeTx struct {
	sqlstore.Tx
	tx *sql.Tx
}

func (w writeTx) Savepoint(ctx context.Context) error {
	_, err := w.Exec(ctx, `SAVEPOINT batch_op`)
	return err
}

func (w writeTx) RollbackTo(ctx context.Context) error {
	_, err := w.Exec(ctx, `ROLLBACK TO batch_op`)
	return err
}

func (w writeTx) Release(ctx context.Context) error {
	_, err := w.Exec(ctx, `RELEASE batch_op`)
	return err
}

func (w writeTx) Commit(context.Context) error { return w.tx.Commit() }

func (w writeTx) Rollback(context.Context) error { return w.tx.Rollback() }

// detached is a transaction whose statements run under their context's
// values but never its cancellation (see batchTx).
type detached struct{ t *txn }

func (d detached) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	return d.t.Exec(context.WithoutCancel(ctx), query, args...)
}

func (d detached) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	return d.t.Query(context.WithoutCancel(ctx), query, args...)
}

func (d detached) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return d.t.QueryRow(context.WithoutCancel(ctx), query, args...)
}

func (d detached) ExecMany(ctx context.Context, query string, args [][]any) ([]int64, error) {
	return d.t.ExecMany(context.WithoutCancel(ctx), query, args)
}

func (d detached) InsertJobs(ctx context.Context, jobs []herald.Job) ([]int64, error) {
	return d.t.InsertJobs(context.WithoutCancel(ctx), jobs)
}

func (d detached) CancelJob(ctx context.Context, id int64) error {
	return d.t.CancelJob(context.WithoutCancel(ctx), id)
}

func (d detached) Pipeline(ctx context.Context, stmts []sqlstore.Stmt) error {
	return d.t.Pipeline(context.WithoutCancel(ctx), stmts)
}
