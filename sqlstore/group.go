package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"runtime"
	"slices"
	"sync"
	"time"
)

// GroupTx is the database transaction a Group runs queued transactions
// in, each in a savepoint of its own. Its statements run under their
// context's values but never its cancellation: a statement interrupted
// may take the transaction, and the others' writes, with it. An error
// from Savepoint, RollbackTo or Release means the transaction can no
// longer be used. Commit and Rollback end it, and whatever turn Begin
// took.
type GroupTx interface {
	Tx
	// Savepoint opens the savepoint of the next transaction; RollbackTo
	// undoes its writes; Release ends it. An engine may send them with
	// the statements that follow (one round trip).
	Savepoint(ctx context.Context) error
	RollbackTo(ctx context.Context) error
	Release(ctx context.Context) error
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// Group is an engine's writer scheduler: the one queue a write
// transaction of the store's waits in before it reaches the database.
// It does two things.
//
// It orders: in a lane, transactions that answer requests (not
// TxOptions.Bulk) go before bulk delivery work that waited longer, each
// kind in order of arrival, so that an accept never waits behind a long
// row of a fan-out's small writes.
//
// It commits together those that may share a commit (TxOptions.Batched,
// never bulk): group commit. A commit costs more than a small
// transaction's statements (on SQLite the WAL frames written and the
// writer handed on, on PostgreSQL two round trips and a WAL flush), so
// transactions that queue while a batch runs share one: the first in the
// queue leads, begins a transaction (Begin), runs its own and every other
// shareable transaction queued in a savepoint of its own, commits,
// answers each, and hands the lead to the first of those queued
// meanwhile. No transaction is answered before the commit that holds its
// writes; one that fails is rolled back to its savepoint and answered its
// error at once, the others going on. Alone in its batch, a transaction
// runs without a savepoint. A transaction that may not share leads a
// batch of its own, in a transaction begun under its own context.
//
// Transactions of a batch that name one joint (TxOptions.Joint) run
// together first, in one savepoint: the joint reads and writes each table
// once for them all (see Joint). Those it leaves, or all of them when it
// fails, run one by one after it, as any other.
//
// A lane runs one batch at a time; a group with several lanes runs that
// many at once, on an engine that can (each in a transaction on a
// connection of its own). An engine builds one with NewGroup.
type Group struct {
	begin func(ctx context.Context, shared bool) (GroupTx, error)
	max   int
	mu    sync.Mutex
	lanes []lane
}

// lane is a queue of its own with a leader of its own.
type lane struct {
	// queue holds the transactions waiting, those not bulk first, each
	// kind in order of arrival. While leading is true a leader is
	// running: its own transaction stays in queue until it takes its
	// batch.
	queue   []*groupOp
	leading bool
}

// add queues op: after the lane's others of its kind, before any bulk
// one when it is not bulk.
func (l *lane) add(op *groupOp) {
	i := len(l.queue)
	if !op.bulk {
		for i > 0 && l.queue[i-1].bulk {
			i--
		}
	}
	l.queue = slices.Insert(l.queue, i, op)
}

// NewGroup returns a group whose batches run in transactions begin
// starts, at most max transactions in one and at most lanes batches at
// once. begin is told whether the batch may hold several transactions
// (shared: its statements must then ignore the end of any one's context;
// ctx is the batch's) or one that may not share (ctx is its own).
func NewGroup(begin func(ctx context.Context, shared bool) (GroupTx, error), max, lanes int) *Group {
	return &Group{begin: begin, max: max, lanes: make([]lane, lanes)}
}

// groupOp is one transaction in the queue.
type groupOp struct {
	ctx context.Context
	fn  func(Tx) error
	// joint and item: TxOptions.Joint and Item.
	joint Joint
	item  any
	// bulk: TxOptions.Bulk; shared: it may share its batch.
	bulk, shared bool
	err          error
	// done is closed once err is final; lead when this op's goroutine is
	// to lead the next batch.
	done, lead chan struct{}
}

func (op *groupOp) finish(err error) {
	op.err = err
	close(op.done)
}

// Queued returns how many transactions wait in the queues, a leader's
// among them until it takes its batch (for tests).
func (g *Group) Queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, l := range g.lanes {
		n += len(l.queue)
	}
	return n
}

// pick returns the lane a transaction joins: one without a batch
// running, else the one with the fewest waiting. The caller holds g.mu.
func (g *Group) pick() *lane {
	best := &g.lanes[0]
	for i := range g.lanes {
		l := &g.lanes[i]
		if !l.leading {
			return l
		}
		if len(l.queue) < len(best.queue) {
			best = l
		}
	}
	return best
}

// Run queues fn and returns once it has committed or failed. opts says
// its kind (Bulk), whether it may share a commit (Batched, not Bulk) and
// its lane: those of one key (TxOptions.Key) join one lane; those of
// none, the lane pick finds.
func (g *Group) Run(ctx context.Context, opts TxOptions, fn func(Tx) error) error {
	op := &groupOp{ctx: ctx, fn: fn, joint: opts.Joint, item: opts.Item, bulk: opts.Bulk, shared: opts.Batched && !opts.Bulk,
		done: make(chan struct{}), lead: make(chan struct{})}
	g.mu.Lock()
	var l *lane
	if opts.Key == "" {
		l = g.pick()
	} else {
		h := fnv.New32a()
		h.Write([]byte(opts.Key))
		l = &g.lanes[h.Sum32()%uint32(len(g.lanes))]
	}
	l.add(op)
	first := !l.leading
	l.leading = true
	g.mu.Unlock()
	if !first {
		select {
		case <-op.done:
			return op.err
		case <-op.lead:
		case <-ctx.Done():
			if g.leave(l, op) {
				return ctx.Err()
			}
			select { // taken into a batch, or handed the lead meanwhile
			case <-op.done:
				return op.err
			case <-op.lead:
			}
		}
	}
	g.leadOne(l, op)
	<-op.done // the leader's op is first in the batch it took
	return op.err
}

// leave takes op out of l's queue if it still waits there and was not
// handed the lead.
func (g *Group) leave(l *lane, op *groupOp) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-op.lead:
		return false
	default:
	}
	if i := slices.Index(l.queue, op); i >= 0 {
		l.queue = slices.Delete(l.queue, i, i+1)
		return true
	}
	return false
}

// batchTimeout bounds a batch whose leader's context has no deadline.
const batchTimeout = 10 * time.Second

// leadOne begins a transaction, takes leader and, when it may share,
// the others of the lane's queue that may (up to max in all), commits the
// batch and hands the lead on. A shared batch runs until the leader's
// deadline (batchTimeout without one), whatever the end of any op's
// context: a database that does not answer fails the batch's
// transactions by then, as it fails one alone. A batch of one that may
// not share runs under its own context.
func (g *Group) leadOne(l *lane, leader *groupOp) {
	ctx := leader.ctx
	if leader.shared {
		deadline, ok := ctx.Deadline()
		if !ok {
			deadline = time.Now().Add(batchTimeout)
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(context.WithoutCancel(ctx), deadline)
		defer cancel()
	}
	// Begin is waited for whatever the leader's caller does: others wait
	// on this leader.
	tx, err := g.begin(ctx, leader.shared)
	if leader.shared && g.alone(l) {
		// Requests already running on this process (read, about to
		// queue) join the batch if let run first: after a batch's
		// answers, the first request back would otherwise commit alone
		// while the rest wait for the next. With nothing else to run,
		// this returns at once.
		runtime.Gosched()
	}
	g.mu.Lock()
	ops := []*groupOp{leader}
	l.queue = slices.DeleteFunc(l.queue, func(op *groupOp) bool {
		take := op == leader || leader.shared && op.shared && len(ops) < g.max
		if take && op != leader {
			ops = append(ops, op)
		}
		return take
	})
	g.mu.Unlock()

	g.commit(ctx, tx, err, ops)

	g.mu.Lock()
	defer g.mu.Unlock()
	if len(l.queue) > 0 {
		close(l.queue[0].lead)
	} else {
		l.leading = false
	}
}

// alone reports whether the leader's transaction is the only one queued
// in its lane.
func (g *Group) alone(l *lane) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(l.queue) == 1
}

// commit runs ops in tx (begun with err) and finishes each: first those
// two or more of which name one joint, together (joinOps), then the
// others one by one. An op whose context ended before its turn is
// answered its context's error.
func (g *Group) commit(ctx context.Context, tx GroupTx, err error, ops []*groupOp) {
	if err != nil {
		for _, op := range ops {
			op.finish(err)
		}
		return
	}
	ran, rest, broken := joinOps(ctx, tx, ops)
	if broken != nil {
		// As below: the joint's ops failed; the others run again.
		_ = tx.Rollback(ctx)
		next, err := g.begin(ctx, true)
		g.commit(ctx, next, err, append(ran, rest...))
		return
	}
	alone := len(ops) == 1
	ops = rest
	for i, op := range ops {
		if err := op.ctx.Err(); err != nil {
			op.finish(err)
			continue
		}
		err, broken := runOp(ctx, tx, op, alone)
		if broken != nil {
			// The transaction can no longer be used: op fails, and those
			// that ran in it, and those not run yet, run again in a new
			// one.
			_ = tx.Rollback(ctx)
			op.finish(err)
			rest := append(ran, ops[i+1:]...)
			next, err := g.begin(ctx, true)
			g.commit(ctx, next, err, rest)
			return
		}
		if err != nil {
			op.finish(err) // rolled back to its savepoint: only op fails
			continue
		}
		ran = append(ran, op)
	}
	if len(ran) == 0 {
		err = tx.Rollback(ctx)
	} else {
		err = tx.Commit(ctx)
	}
	for _, op := range ran {
		op.finish(err)
	}
}

// joinOps runs, for each joint that two or more of ops name (and whose
// contexts have not ended), those ops together in a savepoint of their
// own (Joint.Join). It returns the ops a joint ran and the others, in
// their order. When a joint left the transaction unusable (broken), its
// ops are answered the error and are in neither list.
func joinOps(ctx context.Context, tx GroupTx, ops []*groupOp) (joined, rest []*groupOp, broken error) {
	if !jointsIn(ops) {
		return nil, ops, nil // bulk work, and most batches: nothing to join, nothing allocated
	}
	byJoint := map[Joint][]*groupOp{}
	var joints []Joint
	for _, op := range ops {
		if op.joint == nil || op.ctx.Err() != nil {
			continue
		}
		if _, ok := byJoint[op.joint]; !ok {
			joints = append(joints, op.joint)
		}
		byJoint[op.joint] = append(byJoint[op.joint], op)
	}
	done := map[*groupOp]bool{}
	for _, j := range joints {
		jops := byJoint[j]
		if len(jops) < 2 {
			continue
		}
		ran, err := runJoint(ctx, tx, j, jops)
		if err != nil {
			for _, op := range jops {
				op.finish(err)
				done[op] = true
			}
			broken = err
			break
		}
		for i, op := range jops {
			if ran[i] {
				done[op] = true
				joined = append(joined, op)
			}
		}
	}
	for _, op := range ops {
		if !done[op] {
			rest = append(rest, op)
		}
	}
	return joined, rest, broken
}

// jointsIn reports whether two or more of ops name a joint.
func jointsIn(ops []*groupOp) bool {
	n := 0
	for _, op := range ops {
		if op.joint != nil {
			n++
		}
	}
	return n >= 2
}

// runJoint runs ops through their joint in a savepoint and reports which
// it ran: none when it failed (its writes undone). The error is one that
// left the transaction unusable.
func runJoint(ctx context.Context, tx GroupTx, j Joint, ops []*groupOp) ([]bool, error) {
	items := make([]any, len(ops))
	for i, op := range ops {
		items[i] = op.item
	}
	if err := tx.Savepoint(ctx); err != nil {
		return nil, err
	}
	ran, err := guardedJoin(ctx, j, tx, items)
	if err != nil || len(ran) != len(items) {
		if rbErr := tx.RollbackTo(ctx); rbErr != nil {
			return nil, rbErr
		}
		ran = make([]bool, len(items))
	}
	if relErr := tx.Release(ctx); relErr != nil {
		return nil, fmt.Errorf("sqlstore: release savepoint: %w", relErr)
	}
	return ran, nil
}

// guardedJoin is guarded's for a joint.
func guardedJoin(ctx context.Context, j Joint, t Tx, items []any) (ran []bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			ran, err = nil, fmt.Errorf("sqlstore: joint panicked: %v", p)
		}
	}()
	return j.Join(ctx, t, items)
}

// runOp runs one op in a savepoint (alone in its batch, without one: the
// whole transaction is its own). It returns the op's error, and broken
// when the transaction can no longer be used.
func runOp(ctx context.Context, tx GroupTx, op *groupOp, alone bool) (err, broken error) {
	if alone {
		return guarded(op.fn, tx), nil
	}
	if err := tx.Savepoint(ctx); err != nil {
		return err, err
	}
	err = guarded(op.fn, tx)
	if err != nil {
		if rbErr := tx.RollbackTo(ctx); rbErr != nil {
			return err, rbErr
		}
	}
	if relErr := tx.Release(ctx); relErr != nil {
		return errors.Join(err, fmt.Errorf("sqlstore: release savepoint: %w", relErr)), relErr
	}
	return err, nil
}

// guarded runs fn, a panic turned into its error: the batch's other
// transactions, and the engine's turn, must not be left waiting on the
// leader.
func guarded(fn func(Tx) error, t Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sqlstore: transaction panicked: %v", p)
		}
	}()
	return fn(t)
}

// SerialPipeline runs a pipeline one statement after another on q, for an
// engine whose statements cost no round trip (see Tx.Pipeline).
func SerialPipeline(ctx context.Context, q Querier, stmts []Stmt) error {
	for _, st := range stmts {
		var err error
		switch {
		case st.Row != nil:
			err = st.Row(q.QueryRow(ctx, st.Query, st.Args...))
		case st.Each != nil:
			err = eachRow(ctx, q, st)
		case st.Exec != nil:
			var n int64
			if n, err = q.Exec(ctx, st.Query, st.Args...); err == nil {
				err = st.Exec(n)
			}
		default:
			_, err = q.Exec(ctx, st.Query, st.Args...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// eachRow runs st's query on q and gives each row to st.Each.
func eachRow(ctx context.Context, q Querier, st Stmt) error {
	r, err := q.Query(ctx, st.Query, st.Args...)
	if err != nil {
		return err
	}
	defer r.Close()
	for r.Next() {
		if err := st.Each(r); err != nil {
			return err
		}
	}
	return r.Err()
}
