package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/heraldpush/herald"
)

// conn is a Querier (and, in a transaction, a Tx) whose every error has
// been through the engine's Translate: the one place driver errors become
// the store's.
type conn struct {
	q  Querier
	tx Tx // nil outside a transaction
	tr func(error) error
	lw LookupWriter // the engine's, or nil
	// forUpdate is the engine's RowLocker.ForUpdate, or "".
	forUpdate string
}

func (c conn) exec(ctx context.Context, query string, args ...any) (int64, error) {
	n, err := c.q.Exec(ctx, query, args...)
	return n, c.tr(err)
}

func (c conn) query(ctx context.Context, query string, args ...any) (rows, error) {
	r, err := c.q.Query(ctx, query, args...)
	if err != nil {
		return rows{}, c.tr(err)
	}
	return rows{r: r, tr: c.tr}, nil
}

func (c conn) queryRow(ctx context.Context, query string, args ...any) row {
	return row{r: c.q.QueryRow(ctx, query, args...), tr: c.tr}
}

func (c conn) execMany(ctx context.Context, query string, args [][]any) ([]int64, error) {
	if len(args) == 0 {
		return nil, nil
	}
	ns, err := c.tx.ExecMany(ctx, query, args)
	return ns, c.tr(err)
}

// pipeline runs stmts in one round trip (see Tx.Pipeline), each row and
// error translated.
func (c conn) pipeline(ctx context.Context, stmts ...Stmt) error {
	for i := range stmts {
		if fn := stmts[i].Row; fn != nil {
			stmts[i].Row = func(r Row) error { return fn(row{r: r, tr: c.tr}) }
		}
		if fn := stmts[i].Each; fn != nil {
			stmts[i].Each = func(r Row) error { return fn(row{r: r, tr: c.tr}) }
		}
	}
	return c.tr(c.tx.Pipeline(ctx, stmts))
}

func (c conn) insertJobs(ctx context.Context, jobs []herald.Job) ([]int64, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	ids, err := c.tx.InsertJobs(ctx, jobs)
	if err != nil {
		return nil, fmt.Errorf("insert job: %w", c.tr(err))
	}
	return ids, nil
}

func (c conn) cancelJob(ctx context.Context, id int64) error {
	if err := c.tx.CancelJob(ctx, id); err != nil {
		return fmt.Errorf("cancel job: %w", c.tr(err))
	}
	return nil
}

// row translates its Scan's error.
type row struct {
	r  Row
	tr func(error) error
}

func (r row) Scan(dest ...any) error { return r.tr(r.r.Scan(dest...)) }

// rows translates its errors.
type rows struct {
	r  Rows
	tr func(error) error
}

func (r rows) Next() bool             { return r.r.Next() }
func (r rows) Scan(dest ...any) error { return r.tr(r.r.Scan(dest...)) }
func (r rows) Err() error             { return r.tr(r.r.Err()) }
func (r rows) Close()                 { r.r.Close() }

// scanner is a row or the current row of rows.
type scanner interface{ Scan(dest ...any) error }

// each runs a query and calls scan on each row it returns.
func (c conn) each(ctx context.Context, scan func(scanner) error, query string, args ...any) error {
	r, err := c.query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer r.Close()
	for r.Next() {
		if err := scan(r); err != nil {
			return err
		}
	}
	return r.Err()
}

// translate passes err through the engine's Translate once: an error
// already translated (herald's, or a unique violation) is left as it is.
// A store that did not answer within its caller's deadline is unavailable
// whatever the engine made of it; each unavailable error is told to
// OnUnavailable.
func (s *core) translate(err error) error {
	var he *herald.Error
	if err == nil || errors.Is(err, ErrUnique) || errors.Is(err, ErrDeadlock) || errors.Is(err, errConflict) || errors.As(err, &he) {
		return err
	}
	err = s.e.Translate(err)
	if errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, herald.ErrUnavailable) {
		err = herald.Unavailable(err)
	}
	if s.OnUnavailable != nil && errors.Is(err, herald.ErrUnavailable) {
		s.OnUnavailable(err)
	}
	return err
}

// reader is a conn on the engine's reads outside transactions.
func (s *core) reader() conn {
	return conn{q: s.e.Reader(), tr: s.translate, lw: s.lw} // no locks outside a transaction
}

// TxOptions are what a write transaction tells the engine of itself.
type TxOptions struct {
	// Bulk marks bulk delivery work: the send path's transitions
	// (fan-out, chunk steps, outcomes, ends), many and small. An engine
	// with one writer lets other writes, which answer API requests, go
	// before them (see Group).
	Bulk bool
	// Batched marks a transaction that may share its commit with others
	// (group commit, see Group): an engine may run several such
	// transactions, queued while a batch ran, in one database
	// transaction, each in a savepoint of its own, and commit them at
	// once. Each still returns only after its own writes committed, and
	// one that fails is rolled back to its savepoint without the others.
	// A transaction marked so must read only through its own conn (a read
	// outside it would not see the writes of those before it in the
	// batch), return every error it meets, and be safe to run again
	// (inTxRetry's rule). It holds the rows it locks until the batch
	// commits. Bulk work is never batched.
	Batched bool
	// Key, for a batched transaction, names the row it locks that others
	// are likeliest to want too (a user's, a device's; for registrations,
	// their app's, see RegisterDevice): an engine running
	// several batches at once runs those of one key in one lane (see
	// Group), so that they wait for no other batch's commit nor deadlock
	// with one.
	Key string
	// Joint, for a batched transaction, is a way to run it together with
	// the others of its batch that name the same Joint, each statement
	// made once for them all (see Joint); Item is what the joint is given
	// of it. A transaction its joint does not run runs on its own (fn), as
	// one without a joint does.
	Joint Joint
	Item  any
}

// Joint runs several batched transactions of one kind as one (see
// TxOptions.Joint): the registrations of a batch read each table once and
// write each table in one statement, where each on its own would make
// every statement of its own.
type Joint interface {
	// Join runs those of items it can together in tx and reports which
	// it ran (ran[i] for items[i]); the others run on their own after it.
	// An error undoes every write Join made (the group runs it in a
	// savepoint of its own) and every item then runs on its own: Join
	// need only do the common case, and may leave to the items' own
	// transactions whatever is rare (a race with another writer, a
	// missing row).
	Join(ctx context.Context, tx Tx, items []any) (ran []bool, err error)
}

// inTx runs fn in a write transaction, committing when it returns nil.
func (s *core) inTx(ctx context.Context, fn func(c conn) error) error {
	return s.inTxWith(ctx, TxOptions{}, fn)
}

// inTxWith is inTx with the transaction's options.
func (s *core) inTxWith(ctx context.Context, opts TxOptions, fn func(c conn) error) error {
	return s.translate(s.e.InTx(ctx, opts, func(tx Tx) error {
		return fn(conn{q: tx, tx: tx, tr: s.translate, lw: s.lw, forUpdate: s.forUpdate})
	}))
}

// inBulkTx is inTx for bulk delivery work (see TxOptions.Bulk), run again
// when the database broke a deadlock with it. Bulk work that writes a
// push's row and its chunks' writes the push's first (lockPush), so a
// deadlock is rare, never the rule; fn must be safe to run again. A
// high-priority push's work (herald.WithHighPriority) is not marked bulk:
// it goes before a blast's, as the writes answering requests do.
func (s *core) inBulkTx(ctx context.Context, fn func(c conn) error) error {
	return s.inTxRetryWith(ctx, TxOptions{Bulk: !herald.IsHighPriority(ctx)}, false, fn)
}

// lockPush takes a push's row for the rest of the transaction, before any
// of its chunks' rows: every path that writes both takes them in that
// order (push, then chunks), so none waits for another in a cycle.
func lockPush(ctx context.Context, c conn, pushID string) error {
	if err := c.lockRow(ctx, `pushes`, `id = ?`, pushID); !errors.Is(err, herald.ErrNotFound) {
		return err
	}
	return nil
}

// RowLocker is implemented by an engine whose transactions take row
// locks (PostgreSQL). An engine without one (SQLite) begins every write
// transaction holding the database's write lock, so that a read in it is
// as good as a lock of the rows it reads.
type RowLocker interface {
	// ForUpdate returns the clause that locks the rows a SELECT reads for
	// the rest of the transaction, as an UPDATE of columns of no key
	// would: a lock, not a row version.
	ForUpdate() string
}

// locking returns the SELECT query taking, in a transaction, the lock of
// the rows it reads (see RowLocker).
func (c conn) locking(query string) string { return query + c.forUpdate }

// lockRow takes the lock of the row of table that where (with args)
// selects for the rest of the transaction; herald.ErrNotFound when there
// is none.
func (c conn) lockRow(ctx context.Context, table, where string, args ...any) error {
	return c.queryRow(ctx, c.locking(`SELECT 1 FROM `+table+` WHERE `+where), args...).Scan(new(int))
}

// errConflict is returned inside a transaction when a guarded write found
// its row changed by another writer since it was read: the transaction is
// run again from the start, on the new state.
var errConflict = errors.New("sqlstore: row changed concurrently")

// txAttempts bounds how often a transaction that lost a race is run again.
const txAttempts = 8

// inTxRetry runs fn in a write transaction like inTx, and runs it again
// when a guarded write lost a race (errConflict), the database broke a
// deadlock with it (ErrDeadlock) or, with retryUnique, when
// an insert met a unique violation that a concurrent writer caused (the
// next run sees that writer's row and takes the other path).
func (s *core) inTxRetry(ctx context.Context, retryUnique bool, fn func(c conn) error) error {
	return s.inTxRetryWith(ctx, TxOptions{}, retryUnique, fn)
}

// inTxRetryWith is inTxRetry with the transaction's options.
func (s *core) inTxRetryWith(ctx context.Context, opts TxOptions, retryUnique bool, fn func(c conn) error) error {
	for attempt := 1; ; attempt++ {
		err := s.inTxWith(ctx, opts, fn)
		retry := errors.Is(err, errConflict) || errors.Is(err, ErrDeadlock) || retryUnique && errors.Is(err, ErrUnique)
		switch {
		case !retry:
			return err
		case attempt == txAttempts:
			return fmt.Errorf("sqlstore: gave up after %d attempts: %w", attempt, err)
		case ctx.Err() != nil:
			return ctx.Err()
		}
	}
}

// guard turns a guarded write's result into errConflict when it changed no
// row.
func guard(n int64, err error) error {
	if err != nil {
		return err
	}
	if n == 0 {
		return errConflict
	}
	return nil
}

// execOne runs a write that must touch exactly one row; none is
// herald.ErrNotFound.
func (s *core) execOne(ctx context.Context, query string, args ...any) error {
	return s.inTx(ctx, func(c conn) error { return execOneIn(ctx, c, query, args...) })
}

func execOneIn(ctx context.Context, c conn, query string, args ...any) error {
	n, err := c.exec(ctx, query, args...)
	if err != nil {
		return err
	}
	if n == 0 {
		return herald.ErrNotFound
	}
	return nil
}

// inList renders states (constants of the domain, never user input) as the
// body of an SQL IN list.
func inList[S ~string](states []S) string {
	quoted := make([]string, len(states))
	for i, s := range states {
		quoted[i] = "'" + strings.ReplaceAll(string(s), "'", "''") + "'"
	}
	return strings.Join(quoted, ", ")
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}
