package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sqlstore"
)

// maxBatch bounds the transactions committed together. Each runs in a
// subtransaction; PostgreSQL keeps up to 64 of a transaction's in shared
// memory, past which every other session's snapshots get dearer.
const maxBatch = 64

// lanes is how many batches of one process run at once, each on a
// connection of its own: one batch's round trips leave the database and
// this process idle in turn, so one at a time uses at most a core.
const lanes = 4

// Savepoint statements of a batch.
const (
	savepoint  = `SAVEPOINT batch_op`
	release    = `RELEASE batch_op`
	rollbackTo = `ROLLBACK TO batch_op`
)

// newBatch is the group commit of the transactions marked batched
// (sqlstore.TxOptions, see sqlstore.Group) on this process, up to lanes
// batches at once: queued while a batch runs, they share the next one's transaction, which saves each its
// BEGIN and COMMIT round trips and a WAL flush. The savepoint statements
// cost no round trip of their own: they wait (pending) and go with the
// next statement. Transactions of other processes, and those not batched,
// run beside the batches as ever: the rows each batch's writes lock are
// held until its commit. Only transactions that may share come here (see
// InTx), so every batch begins shared.
func newBatch(db *DB, lanes int) *sqlstore.Group {
	return sqlstore.NewGroup(func(ctx context.Context, _ bool) (sqlstore.GroupTx, error) {
		opts := pgx.TxOptions{IsoLevel: pgx.ReadCommitted}
		tx, err := db.Pool.BeginTx(ctx, opts)
		if err != nil && brokenConn(err) {
			// As InTx: nothing was written, and the next connection
			// may be a fresh one.
			db.Pool.Reset()
			tx, err = db.Pool.BeginTx(ctx, opts)
		}
		if err != nil {
			return nil, err
		}
		p := &pending{tx: tx, batch: ctx}
		return &batchTx{txn: txn{querier{p, &db.rb}, tx, db.Queue}, p: p}, nil
	}, maxBatch, lanes)
}

// batchTx is a batch's transaction. Its statements end with the batch
// (its leader's deadline, see sqlstore.Group), never with an op's
// context: pgx ends the connection of a statement cancelled, and the
// transaction with it.
type batchTx struct {
	txn
	p *pending
	// undone: the op's savepoint was never sent, so neither is its
	// release.
	undone bool
}

func (b *batchTx) Savepoint(context.Context) error {
	b.p.stmts = append(b.p.stmts, savepoint)
	b.p.unsent = true
	return nil
}

// Release ends the op's savepoint; an op that sent nothing has none.
func (b *batchTx) Release(context.Context) error {
	switch {
	case b.undone:
		b.undone = false
	case b.p.unsent:
		b.p.dropSavepoint()
	default:
		b.p.stmts = append(b.p.stmts, release)
	}
	return nil
}

// RollbackTo undoes the op's writes; an op that sent nothing has nothing
// to undo.
func (b *batchTx) RollbackTo(ctx context.Context) error {
	if b.p.unsent {
		b.p.dropSavepoint()
		b.undone = true
		return nil
	}
	_, err := b.p.Exec(ctx, rollbackTo)
	return err
}

// Commit commits; a release waiting is the commit's to do.
func (b *batchTx) Commit(ctx context.Context) error {
	if n := len(b.p.stmts); n > 0 && b.p.stmts[n-1] == release {
		b.p.stmts = b.p.stmts[:n-1]
	}
	if err := b.p.flush(ctx); err != nil {
		_ = b.tx.Rollback(b.p.bound(ctx))
		return err
	}
	return b.tx.Commit(b.p.bound(ctx))
}

func (b *batchTx) Rollback(ctx context.Context) error {
	b.p.stmts, b.p.unsent = nil, false
	return b.tx.Rollback(b.p.bound(ctx))
}

func (b *batchTx) Pipeline(ctx context.Context, stmts []sqlstore.Stmt) error {
	batch := b.p.take()
	b.queueStmts(batch, stmts)
	return b.tx.SendBatch(b.p.bound(ctx), batch).Close()
}

func (b *batchTx) ExecMany(ctx context.Context, query string, args [][]any) ([]int64, error) {
	ctx = b.p.bound(ctx)
	if err := b.p.flush(ctx); err != nil {
		return nil, err
	}
	return b.txn.ExecMany(ctx, query, args)
}

func (b *batchTx) InsertJobs(ctx context.Context, jobs []herald.Job) ([]int64, error) {
	ctx = b.p.bound(ctx)
	if err := b.p.flush(ctx); err != nil {
		return nil, err
	}
	return b.txn.InsertJobs(ctx, jobs)
}

func (b *batchTx) CancelJob(ctx context.Context, id int64) error {
	ctx = b.p.bound(ctx)
	if err := b.p.flush(ctx); err != nil {
		return err
	}
	return b.txn.CancelJob(ctx, id)
}

// pending is a transaction's statements with the savepoint statements
// waiting to go before the next of them, in its round trip.
type pending struct {
	tx pgx.Tx
	// batch is the batch's context, whose end ends its statements.
	batch context.Context
	stmts []string
	// unsent: the last of stmts is a savepoint.
	unsent bool
}

// bound returns ctx's values with the batch's end (see boundCtx).
func (p *pending) bound(ctx context.Context) context.Context {
	return boundCtx{context.WithoutCancel(ctx), p.batch}
}

// boundCtx is an op's context (its values) that ends when its batch does
// (Deadline, Done, Err), not when the op's caller goes.
type boundCtx struct {
	context.Context
	batch context.Context
}

func (c boundCtx) Deadline() (time.Time, bool) { return c.batch.Deadline() }
func (c boundCtx) Done() <-chan struct{}       { return c.batch.Done() }
func (c boundCtx) Err() error                  { return c.batch.Err() }

// dropSavepoint drops the savepoint waiting, last of the statements.
func (p *pending) dropSavepoint() {
	p.stmts = p.stmts[:len(p.stmts)-1]
	p.unsent = false
}

// take returns a batch holding the statements waiting.
func (p *pending) take() *pgx.Batch {
	b := &pgx.Batch{}
	for _, s := range p.stmts {
		b.Queue(s)
	}
	p.stmts, p.unsent = p.stmts[:0], false
	return b
}

// flush sends the statements waiting.
func (p *pending) flush(ctx context.Context) error {
	if len(p.stmts) == 0 {
		return nil
	}
	return p.tx.SendBatch(ctx, p.take()).Close()
}

func (p *pending) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	ctx = p.bound(ctx)
	if len(p.stmts) == 0 {
		return p.tx.Exec(ctx, sql, args...)
	}
	var tag pgconn.CommandTag
	b := p.take()
	b.Queue(sql, args...).Exec(func(t pgconn.CommandTag) error {
		tag = t
		return nil
	})
	return tag, p.tx.SendBatch(ctx, b).Close()
}

func (p *pending) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	ctx = p.bound(ctx)
	if err := p.flush(ctx); err != nil {
		return nil, err
	}
	return p.tx.Query(ctx, sql, args...)
}

// QueryRow sends the statements waiting with the query when the row is
// scanned (the store scans every row it asks for).
func (p *pending) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	ctx = p.bound(ctx)
	if len(p.stmts) == 0 {
		return p.tx.QueryRow(ctx, sql, args...)
	}
	b := p.take()
	return lazyRow{func(dest ...any) error {
		b.Queue(sql, args...).QueryRow(func(r pgx.Row) error { return r.Scan(dest...) })
		return p.tx.SendBatch(ctx, b).Close()
	}}
}

// lazyRow is a row whose query is sent when it is scanned.
type lazyRow struct{ scan func(dest ...any) error }

func (r lazyRow) Scan(dest ...any) error { return r.scan(dest...) }
