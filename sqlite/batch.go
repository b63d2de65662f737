package sqlite

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sqlstore"
)

// maxBatch bounds the transactions committed together, so that one batch
// holds the writer no longer than a few ordinary transactions.
const maxBatch = 128

// batch commits the transactions marked batched (sqlstore.TxOptions) together (group
// commit). A commit costs more than a registration's statements (WAL
// frames written and checksummed, the writer handed from one goroutine to
// the next), so transactions that queue while the writer is busy share
// one: the first in the queue leads, takes the writer, runs every queued
// transaction in a savepoint of its own, commits, answers each, and hands
// the lead to the first of those queued meanwhile. No transaction is
// answered before the commit that holds its writes; one that fails is
// rolled back to its savepoint and answered its error at once, the others
// going on. Alone in the queue, a transaction runs as InTx runs it.
type batch struct {
	mu sync.Mutex
	// queue holds the transactions waiting; its first is the leader's
	// whenever leading is true.
	queue   []*batchOp
	leading bool
}

// batchOp is one transaction in the queue.
type batchOp struct {
	ctx context.Context
	fn  func(sqlstore.Tx) error
	err error
	// done is closed once err is final; lead when this op's goroutine is
	// to lead the next batch.
	done, lead chan struct{}
}

func (op *batchOp) finish(err error) {
	op.err = err
	close(op.done)
}

// run queues fn and returns once it has committed or failed.
func (b *batch) run(ctx context.Context, db *DB, fn func(sqlstore.Tx) error) error {
	op := &batchOp{ctx: ctx, fn: fn, done: make(chan struct{}), lead: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, op)
	first := !b.leading
	b.leading = true
	b.mu.Unlock()
	if !first {
		select {
		case <-op.done:
			return op.err
		case <-op.lead:
		}
	}
	b.leadOne(db)
	<-op.done // the leader's op is first in the batch it took
	return op.err
}

// leadOne takes the writer and the queue, commits the batch and hands the
// lead on.
func (b *batch) leadOne(db *DB) {
	b.mu.Lock()
	ctx := context.WithoutCancel(b.queue[0].ctx)
	b.mu.Unlock()
	// The writer is waited for whatever the leader's caller does: others
	// wait on this leader. The wait is bounded by the transactions ahead.
	_ = db.gate.enter(ctx, false) // fails only when ctx ends, and it never does
	if b.alone() {
		// Requests already running on this process (read, about to
		// queue) join the batch if let run first: after a batch's
		// answers, the first request back would otherwise commit alone
		// while the rest wait for the next. With nothing else to run,
		// this returns at once.
		runtime.Gosched()
	}
	b.mu.Lock()
	n := min(len(b.queue), maxBatch)
	ops := append([]*batchOp(nil), b.queue[:n]...)
	b.queue = append(b.queue[:0], b.queue[n:]...)
	b.mu.Unlock()

	db.commitBatch(ctx, ops)
	db.gate.leave()

	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) > 0 {
		close(b.queue[0].lead)
	} else {
		b.leading = false
	}
}

// alone reports whether the leader's transaction is the only one queued.
func (b *batch) alone() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue) == 1
}

// commitBatch runs ops in one transaction on the writer (whose turn the
// caller holds) and finishes each. Its statements ignore the end of any
// op's context: SQLite rolls back the whole transaction when a write is
// interrupted, which would take the others' writes with it. An op whose
// context ended before its turn is answered its context's error.
func (db *DB) commitBatch(ctx context.Context, ops []*batchOp) {
	tx, err := db.Writer.BeginTx(ctx, nil)
	if err != nil {
		for _, op := range ops {
			op.finish(err)
		}
		return
	}
	t := newTxn(tx, db.Queue)
	var ran []*batchOp
	for i, op := range ops {
		if err := op.ctx.Err(); err != nil {
			op.finish(err)
			continue
		}
		err, broken := runOp(ctx, detached{t}, op, len(ops) == 1)
		if broken != nil {
			// The transaction is gone (SQLite rolled it back): op fails,
			// and those that ran in it, and those not run yet, run again
			// in a new one.
			tx.Rollback()
			op.finish(err)
			db.commitBatch(ctx, append(ran, ops[i+1:]...))
			return
		}
		if err != nil {
			op.finish(err) // rolled back to its savepoint: only op fails
			continue
		}
		ran = append(ran, op)
	}
	if len(ran) == 0 {
		err = tx.Rollback()
	} else {
		err = tx.Commit()
	}
	for _, op := range ran {
		op.finish(err)
	}
}

// runOp runs one op in a savepoint (alone in its batch, without one: the
// whole transaction is its own). It returns the op's error, and broken
// when the transaction can no longer be used. The savepoint statements
// are kept compiled like the store's.
func runOp(ctx context.Context, t sqlstore.Tx, op *batchOp, alone bool) (err, broken error) {
	if alone {
		return guarded(op.fn, t), nil
	}
	if _, err := t.Exec(ctx, `SAVEPOINT batch_op`); err != nil {
		return err, err
	}
	err = guarded(op.fn, t)
	if err != nil {
		if _, rbErr := t.Exec(ctx, `ROLLBACK TO batch_op`); rbErr != nil {
			return err, rbErr
		}
	}
	if _, relErr := t.Exec(ctx, `RELEASE batch_op`); relErr != nil {
		return errors.Join(err, fmt.Errorf("sqlite: release savepoint: %w", relErr)), relErr
	}
	return err, nil
}

// guarded runs fn, a panic turned into its error: the batch's other
// transactions, and the writer, must not be left waiting on the leader.
func guarded(fn func(sqlstore.Tx) error, t sqlstore.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sqlite: transaction panicked: %v", p)
		}
	}()
	return fn(t)
}

// detached is a transaction whose statements run under their context's
// values but never its cancellation (see commitBatch).
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
