package sqlite

import (
	"context"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sqlstore"
)

// maxBatch bounds the transactions committed together, so that one batch
// holds the writer no longer than a few ordinary transactions.
const maxBatch = 128

// newBatch is the group commit of the transactions marked batched
// (sqlstore.TxOptions, see sqlstore.Group): each batch takes the writer
// (the gate) and runs in one transaction on it.
func newBatch(db *DB) *sqlstore.Group {
	return sqlstore.NewGroup(func(ctx context.Context) (sqlstore.GroupTx, error) {
		// The writer is waited for until the batch's deadline (its
		// leader's, see sqlstore.Group), whatever the leader's caller
		// does: others wait on this leader.
		if err := db.gate.enter(ctx, false); err != nil {
			return nil, err
		}
		tx, err := db.Writer.BeginTx(ctx, nil)
		if err != nil {
			db.gate.leave()
			return nil, err
		}
		return batchTx{detached{newTxn(tx, db.Queue)}, db}, nil
	}, maxBatch, 1)
}

// batchTx is a batch's transaction on the writer. Its savepoint
// statements are kept compiled like the store's. SQLite rolls back the
// whole transaction when a write is interrupted, which would take the
// others' writes with it: its statements ignore the end of any op's
// context (detached).
type batchTx struct {
	detached
	db *DB
}

func (b batchTx) Savepoint(ctx context.Context) error {
	_, err := b.Exec(ctx, `SAVEPOINT batch_op`)
	return err
}

func (b batchTx) RollbackTo(ctx context.Context) error {
	_, err := b.Exec(ctx, `ROLLBACK TO batch_op`)
	return err
}

func (b batchTx) Release(ctx context.Context) error {
	_, err := b.Exec(ctx, `RELEASE batch_op`)
	return err
}

func (b batchTx) Commit(context.Context) error {
	defer b.db.gate.leave()
	return b.t.tx.Commit()
}

func (b batchTx) Rollback(context.Context) error {
	defer b.db.gate.leave()
	return b.t.tx.Rollback()
}

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
