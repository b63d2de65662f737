package postgres

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
)

// reserve is how many of the pool's connections River's jobs leave to the
// rest (see workGate): River's LISTEN, which holds one for good, the
// schedule watch, River's own fetches and completions, and the requests.
func reserve(maxConns int32) int32 { return 2 + maxConns/4 }

// workGate bounds the connections River's jobs (fan-outs, send chunks,
// finishes, webhooks: some 40 workers) hold at once to fewer than the pool
// has. A job's statement waits on the rows and tables it touches while it
// holds its connection: with the pushes table locked (a migration, an
// operator's LOCK TABLE), every send chunk ending would wait on the push's
// row, and once they held the whole pool an SDK registration, an admin
// read or the readiness probe, which never touch pushes, would wait for a
// connection until their deadlines. With the gate the jobs wait for a slot
// instead, and the pool keeps connections for everything else.
//
// A job is known by its context (River puts its client there for Work).
// Batched transactions are not gated: a batch may carry requests' writes
// beside a job's, and the lanes bound them (see newBatch).
type workGate struct{ slots chan struct{} }

func newWorkGate(maxConns int32) workGate {
	return workGate{slots: make(chan struct{}, max(1, maxConns-reserve(maxConns)))}
}

// enter takes a slot when ctx is a River job's, waiting for one as long as
// ctx allows, and returns what gives it back; it returns a no-op for any
// other context.
func (g workGate) enter(ctx context.Context) (func(), error) {
	if _, err := river.ClientFromContextSafely[pgx.Tx](ctx); err != nil {
		return func() {}, nil
	}
	select {
	case g.slots <- struct{}{}:
		return sync.OnceFunc(func() { <-g.slots }), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// gated runs a job's reads in a slot of the gate (see workGate), held
// until the statement's answer has been read.
type gated struct {
	q    pgxQuerier
	gate workGate
}

func (g gated) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	leave, err := g.gate.enter(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	defer leave()
	return g.q.Exec(ctx, sql, args...)
}

func (g gated) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	leave, err := g.gate.enter(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := g.q.Query(ctx, sql, args...)
	if err != nil {
		leave()
		return nil, err
	}
	return gatedRows{Rows: rows, leave: leave}, nil
}

func (g gated) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	leave, err := g.gate.enter(ctx)
	if err != nil {
		return errRow{err}
	}
	return gatedRow{row: g.q.QueryRow(ctx, sql, args...), leave: leave}
}

// gatedRows are a job's rows, whose slot is given back once they are
// read to the end or closed (as pgx gives back their connection).
type gatedRows struct {
	pgx.Rows
	leave func()
}

func (r gatedRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.leave()
	return false
}

func (r gatedRows) Close() {
	r.Rows.Close()
	r.leave()
}

// gatedRow is a job's row, whose slot is given back once it is scanned.
type gatedRow struct {
	row   pgx.Row
	leave func()
}

func (r gatedRow) Scan(dest ...any) error {
	defer r.leave()
	return r.row.Scan(dest...)
}

// errRow is a row that could not be asked for.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
