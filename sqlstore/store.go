// Package sqlstore is Herald's store written once in SQL that both engines
// accept: every query of herald's store interfaces, run against a small
// Engine each adapter provides (sqlite on database/sql, postgres on pgx).
// An engine supplies connections, transactions, River's jobs in those
// transactions, and the translation of its driver's errors; it writes no
// query of the store's, but may write a lookup of many keys in a form of
// its own (LookupWriter).
//
// The shared dialect: `?` placeholders (also `?NNN`, numbered), which an
// engine numbering its parameters rebinds; TRUE and FALSE, never 1 and 0;
// IS NOT DISTINCT FROM for a comparison that may meet NULL; a CAST where a
// parameter's type cannot be inferred from a column; ON CONFLICT and
// RETURNING; times as integer milliseconds.
//
// Store is one small store per aggregate — pushes with their chunks and
// deliveries (PushStore), users and devices, consent, apps, operators and
// sessions, access records, retention, the deployment's own rows — each
// over the same engine and clock (core). Of a transaction that spans two,
// the store whose aggregate it changes runs it. The decisions are the
// domain's (herald.Push.Apply, sendstore.Chunk.Apply, the charges and
// refunds they return); a store loads what they need, applies them and
// persists what they return.
package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/identity"
	"github.com/heraldpush/herald/retention"
	"github.com/heraldpush/herald/sendstore"
)

// Querier runs statements of the shared dialect.
type Querier interface {
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// Tx is a write transaction: statements, statements run once per argument
// list, and River's jobs inserted and cancelled in the same transaction.
type Tx interface {
	Querier
	// ExecMany runs query once per argument list, in order, and returns
	// the rows each run changed. An engine may prepare or batch it.
	ExecMany(ctx context.Context, query string, args [][]any) ([]int64, error)
	// InsertJobs inserts jobs and returns their ids, in order.
	InsertJobs(ctx context.Context, jobs []herald.Job) ([]int64, error)
	// CancelJob cancels a job that has not run yet.
	CancelJob(ctx context.Context, id int64) error
	// Pipeline runs the statements in order, on an engine with round
	// trips in one, and gives each result to its callback as it comes.
	// It stops at the first error, a statement's or a callback's, and
	// returns it.
	Pipeline(ctx context.Context, stmts []Stmt) error
}

// Stmt is one statement of a pipeline. Row, when set, is given the
// statement's row (its Scan reports no row as Translate does); otherwise
// Each, when set, is given each row the statement returns, in order;
// otherwise Exec, when set, is given how many rows it changed.
type Stmt struct {
	Query string
	Args  []any
	Row   func(Row) error
	Each  func(Row) error
	Exec  func(n int64) error
}

// Rows is the result of a query; Close may be called more than once.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Row is the result of a query of one row; Scan reports no row as the
// engine's own error, which Translate maps to herald.ErrNotFound.
type Row interface {
	Scan(dest ...any) error
}

// Engine is what an adapter provides.
type Engine interface {
	// Reader runs reads outside any transaction.
	Reader() Querier
	// InTx runs fn in a write transaction, committing when fn returns nil
	// and rolling back otherwise. An engine queues its writes in one
	// scheduler at most, a Group: one with one writer lets transactions
	// that are not bulk (TxOptions.Bulk) go first; an engine may commit
	// batched ones together (TxOptions.Batched).
	InTx(ctx context.Context, opts TxOptions, fn func(Tx) error) error
	// Translate maps the driver's errors to the store's: no row is
	// herald.ErrNotFound, a unique violation wraps ErrUnique, a deadlock
	// ErrDeadlock, a database
	// that cannot be reached, is full or read-only is
	// herald.Unavailable; any other error is returned as it is.
	Translate(err error) error
}

// ErrUnique marks an insert or update that met a unique index. A
// transaction that lost a race this way is run again (see inTxRetry).
var ErrUnique = errors.New("unique violation")

// ErrDeadlock marks a statement the database failed to break a deadlock
// (or a serialization failure): its transaction lost a race with another
// and is run again (see inTxRetry). Batches (see Group) running at once
// on several connections or nodes lock rows in no common order.
var ErrDeadlock = errors.New("deadlock")

// Store implements herald's store interfaces on an Engine: one small
// store per aggregate, each over the same engine and clock. The node
// hands each consumer the whole Store through the interfaces it needs;
// a test or a tool may take one aggregate's store alone.
type Store struct {
	*core
	*PushStore
	*UserStore
	*ConsentStore
	*AppStore
	*OperatorStore
	*AuditStore
	*RetentionStore
	*NodeStore
	*StreamStore
}

// core is what every aggregate's store shares: the engine, the clock and
// the outage hook.
type core struct {
	// Now is the clock; tests replace it.
	Now func() time.Time
	// OnUnavailable, when set, is told of every store call that failed
	// with herald.ErrUnavailable (the outage log aggregates them).
	OnUnavailable func(error)
	e             Engine
	lw            LookupWriter // the engine's, when it writes lookups itself
	forUpdate     string       // the engine's RowLocker.ForUpdate, or ""
}

// PushStore keeps pushes, their chunks and deliveries, their history and
// the event reports of their devices.
type PushStore struct {
	*core
	// targets knows which devices each push was sent to.
	targets *targets
	// events writes a batch's event reports together (see eventsJoint).
	events Joint
	// userChunks writes the query of a user's chunks (UserChunksWriter).
	userChunks func(cols string) string
	// chunkUsers is the engine's UserChunksWriter; nil where user_pushes
	// holds every user of a chunk.
	chunkUsers UserChunksWriter
}

// UserStore keeps app users and their devices, registrations and topics.
type UserStore struct {
	*core
	// regs makes a batch's registrations together (see registrations),
	// on an engine that is a RegistrationJoiner; nil on another.
	regs Joint
}

// ConsentStore keeps the consent trail, its imports and the
// re-confirmation notices.
type ConsentStore struct{ *core }

// AppStore keeps apps, their keys, credentials and settings.
type AppStore struct{ *core }

// OperatorStore keeps operators, their sessions, setup links, tokens and
// sign-in attempts.
type OperatorStore struct{ *core }

// AuditStore keeps the hash-chained access records.
type AuditStore struct {
	*core
	// head is the access records' chain head this process last wrote.
	head *accessHead
	// appends gathers concurrent appends of access records.
	appends accessBatches
}

// RetentionStore expires and prunes what the retention policy says.
type RetentionStore struct{ *core }

// NodeStore keeps what belongs to the deployment: the nodes' heartbeats,
// the master key's check value and the last backup.
type NodeStore struct {
	*core
	jobs JobReleaser // the engine's, when its nodes share River's jobs
}

// JobReleaser is an engine whose nodes share River's jobs (PostgreSQL).
type JobReleaser interface {
	// ReleaseJobs makes the running jobs last attempted by one of the
	// River clients available at at, in tx, and returns how many.
	ReleaseJobs(ctx context.Context, tx Tx, clients []string, at time.Time) (int64, error)
}

// New returns a store on e with the wall clock.
func New(e Engine) *Store {
	c := &core{Now: time.Now, e: e}
	c.lw, _ = e.(LookupWriter)
	if l, ok := e.(RowLocker); ok {
		c.forUpdate = l.ForUpdate()
	}
	s := &Store{core: c,
		PushStore: &PushStore{core: c, targets: newTargets()}, UserStore: &UserStore{core: c},
		ConsentStore: &ConsentStore{c}, AppStore: &AppStore{c}, OperatorStore: &OperatorStore{c},
		AuditStore: &AuditStore{core: c, head: &accessHead{}}, RetentionStore: &RetentionStore{c}, NodeStore: &NodeStore{core: c},
		StreamStore: &StreamStore{c}}
	s.NodeStore.jobs, _ = e.(JobReleaser)
	s.PushStore.userChunks = UserPushesQuery
	if w, ok := e.(UserChunksWriter); ok {
		s.PushStore.userChunks, s.PushStore.chunkUsers = w.UserChunksQuery, w
	}
	s.PushStore.events = &eventsJoint{s: s.PushStore}
	if _, ok := e.(RegistrationJoiner); ok {
		s.UserStore.regs = &registrations{s: s.UserStore}
	}
	return s
}

// Each of herald's store interfaces is one aggregate's, or spans two.
var (
	_ herald.AppStore       = (*AppStore)(nil)
	_ herald.UserStore      = (*UserStore)(nil)
	_ audience.Store        = (*UserStore)(nil)
	_ herald.PushStore      = (*PushStore)(nil)
	_ sendstore.Store       = (*Store)(nil) // pushes and the devices they go to
	_ herald.HistoryStore   = (*PushStore)(nil)
	_ herald.ScheduleStore  = (*PushStore)(nil)
	_ herald.MasterKeyStore = (*NodeStore)(nil)
	_ identity.SessionStore = (*OperatorStore)(nil)
	_ herald.EventStore     = (*PushStore)(nil)
	_ access.Store          = (*AuditStore)(nil)
	_ herald.ConsentStore   = (*ConsentStore)(nil)
	_ herald.NoticeStore    = (*ConsentStore)(nil)
	_ retention.Store       = (*RetentionStore)(nil)
)
