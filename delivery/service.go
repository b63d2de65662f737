// Package delivery turns accepted pushes into FCM messages: the fan-out of
// each push to its users' tokens at send time, consent and night rules,
// sends in chunks with retries, the end of each push, and the webhook for
// unreachable users. All of it runs as River jobs, so it survives restarts
// and is shared among nodes.
//
// Every send goes one way, and these words name its parts:
//
//   - A chunk is a run of a push's deliveries sent by one job: the
//     fan-out makes one per ChunkSize tokens, stored as one value, each
//     with a send job; but a push that names its users or its token and
//     makes one chunk (a lone chunk, see lone) is sent by its fan-out's
//     job, in the run that records it.
//   - A slot is one delivery in a chunk, at a position. Its state is
//     where the position lies against the chunk's range.
//   - Settled: every slot before the chunk's cursor has its outcome. A
//     first send that reached FCM is counted, not written; any other
//     outcome (failure, dead token, suppression, a resent send) is a
//     delivery row, written once.
//   - In flight: the slots from the cursor up to the range's end were
//     marked as about to be sent; a send of each may have reached FCM.
//     Only these can be sent twice after a crash.
//   - The window is the slots one run has in flight: at most Concurrency,
//     moved on as sends come back, each move one write (a step) that
//     settles what came back and marks what goes next. The write checks
//     that each device still holds its token (and user), so a device that
//     changed hands is never sent to.
//   - A retry chunk is a new chunk of the push made by a step from the
//     slots it settles that are to be sent again: retriable failures, due
//     at their backoff, and sends cut off or left in flight by a run that
//     died, due at once and marked resent. Its send job runs like any
//     other.
//   - The push finishes once every chunk has completed: the run that
//     completes the last one finishes it (records its end and unreachable
//     users, queues its webhooks), and a run after a crash between the
//     two finishes it again (sendstore.Store.CompleteChunk tells it); the
//     finish records once however many run it. A finish job ends only a
//     push that failed, made no chunk, or was cancelled or released.
//
// The chunk is a state machine, held as a value (sendstore.Chunk: its
// range, and whether its push failed) and moved by one transition,
// Chunk.Apply(step, facts) → (chunk, effects), which reads nothing: a
// run builds a step from the outcomes that came back and the slots it
// judged (window.go), the store loads the chunk and the facts the step
// depends on (its targets' devices now, a retry chunk's number), applies
// it and persists the new range with the effects (rows, counts, the
// retry chunk and its job, dead tokens) in one transaction. When the
// machine ends the range short of what a step asked for (a device
// changed since it was judged), the run judges the rest on the devices
// as they are now (see judge). Each worker reaches the store through the
// narrow interface it uses (SendStore, FanoutStore, FinishStore,
// ConsentEventStore).
//
// The push above its chunks is a state machine too, held as a value
// (herald.Push) and moved by herald.Push.Apply(step, facts) → (push,
// effects): its table (root push_machine.go) says which step (edit,
// cancel, release, finish, fail, …) each status takes and what it
// charges, refunds, queues or cancels. The service builds the step from
// a request (EditScheduled, CancelScheduled, Release) or a job's end,
// and the store's StepPush loads the push and its facts, applies the
// step and persists the result with its effects in one transaction
// guarded by the push as it was read; no rule crosses the store boundary
// as a closure.
package delivery

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// Store is what delivery needs of storage.
type Store interface {
	herald.AppStore
	herald.PushStore
	sendstore.Store
	herald.ScheduleStore
	herald.ConsentStore
	herald.NoticeStore
	herald.HoldStore
}

// Sender gives the sender of each app's notifications (the FCM client).
type Sender interface {
	// ForApp returns the sender of one app's notifications with its
	// service-account file, which it reads once: a send job's run takes
	// one for all its sends. appKey names the app, for caching its access
	// token.
	ForApp(appKey string, serviceAccount []byte) herald.AppSender
}

// WebhookSender posts one signed webhook message. Errors wrapping
// herald.ErrNoRetry are not retried.
type WebhookSender interface {
	Report(ctx context.Context, url, secret string, r herald.UndeliverableReport) error
	// ConsentChanged posts the consent.changed event of a record.
	ConsentChanged(ctx context.Context, url, secret string, r herald.ConsentRecord) error
	// ApprovalRequested posts the push.approval_requested event of a
	// push awaiting approval.
	ApprovalRequested(ctx context.Context, url, secret string, r herald.ApprovalRequest) error
}

// DefaultConcurrency is the sends a chunk's run has in flight at most
// (Config.Concurrency). With the send queue's workers (Queues) it bounds
// what one process has in flight, so what a crash sends again. The
// window marks and settles in batches of half of it, each batch one
// write (AdvanceChunk): on PostgreSQL a transaction that costs the
// database about half a millisecond of CPU, so 100 against 50 took an
// eighth off the database's CPU per delivery (docs/notes/performance-passes.md,
// fourth pass). A process then has up to 1,400 sends in flight (14
// send workers): 28,000 a second where FCM answers in 50 ms.
const DefaultConcurrency = 100

// MaxInFlight is the most sends one process has in flight at its
// defaults: every worker of the send queue and of the high lane running
// a chunk's window.
func MaxInFlight() int {
	q := Queues()
	return (q[QueueSend].MaxWorkers + q[QueueHigh].MaxWorkers) * DefaultConcurrency
}

// Config holds the service's dependencies and knobs.
type Config struct {
	Store     Store
	Sender    Sender
	Webhooks  WebhookSender
	MasterKey *herald.MasterKey
	Logger    *slog.Logger
	Now       func() time.Time
	// ChunkSize is the number of tokens per send job (default 500).
	ChunkSize int
	// FanoutPage is the number of devices a topic or all-users push reads
	// and records at a time (default 10,000).
	FanoutPage int
	// Concurrency is the number of sends in flight per chunk job
	// (DefaultConcurrency when zero).
	Concurrency int
	// RetryFor bounds how long retriable sends are retried (default 1 h).
	RetryFor time.Duration
	// Jitter draws the ±25 % jitter of each retry's backoff, a number in
	// [0, 1) (math/rand's by default); the simulation draws it from its
	// seed, so a run replays.
	Jitter func() float64
	// SendSlice is how long one run of a fan-out or send job works
	// before it yields to go on in a new run (default SendSlice; real
	// time, as it bounds the run against JobTimeout).
	SendSlice time.Duration
	// Observe, when set, is told the outcome of every send (metrics).
	Observe func(outcome string)
	// FCMProjectRate paces the sends of all apps of one FCM project
	// together, a minute (default herald.DefaultFCMProjectRate).
	FCMProjectRate int
}

// Service accepts pushes and works their jobs.
type Service struct {
	cfg  Config
	pace *pacer // each app's sends paced to its rate
	// pages holds a place for each fan-out page being planned and
	// recorded in this process, one per core (see page).
	pages chan struct{}
	// The store as each worker uses it (see SendStore).
	sends    SendStore
	fanouts  FanoutStore
	finishes FinishStore
	consents ConsentEventStore
	notices  NoticeStore
}

// New returns a Service with defaults filled in.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ChunkSize <= 0 {
		cfg.ChunkSize = 500
	}
	if cfg.FanoutPage <= 0 {
		cfg.FanoutPage = 10_000
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Jitter == nil {
		cfg.Jitter = rand.Float64
	}
	if cfg.RetryFor <= 0 {
		cfg.RetryFor = time.Hour
	}
	if cfg.SendSlice <= 0 || cfg.SendSlice > SendSlice {
		cfg.SendSlice = SendSlice
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Observe == nil {
		cfg.Observe = func(string) {}
	}
	return &Service{cfg: cfg, pace: newPacer(cfg.FCMProjectRate), pages: make(chan struct{}, runtime.GOMAXPROCS(0)),
		sends: cfg.Store, fanouts: cfg.Store, finishes: cfg.Store, consents: cfg.Store, notices: cfg.Store}
}

// Workers returns River's workers for every job kind of delivery.
func (s *Service) Workers() *river.Workers {
	w := river.NewWorkers()
	river.AddWorker(w, &fanoutWorker{s: s})
	river.AddWorker(w, &sendWorker{s: s})
	river.AddWorker(w, &finishWorker{s: s})
	river.AddWorker(w, &webhookWorker{s: s})
	river.AddWorker(w, &consentWorker{s: s})
	river.AddWorker(w, &noticeWorker{s: s})
	river.AddWorker(w, &dailyWorker{s: s})
	river.AddWorker(w, &reconfirmedWorker{s: s})
	river.AddWorker(w, &approvalExpiryWorker{s: s})
	river.AddWorker(w, &approvalWebhookWorker{s: s})
	return w
}

// Accept stores a push durably with the job that will send it, at once or at
// its scheduled time (one awaiting approval with the jobs of its wait,
// acceptJobs). It answers the id of the push (the first one's, when
// an idempotency key is replayed).
func (s *Service) Accept(ctx context.Context, p herald.Push, rs []herald.Recipient, idem *herald.Idempotency) (string, bool, error) {
	return s.cfg.Store.AcceptPush(ctx, p, rs, idem, s.acceptJobs(p)...)
}

// scheduledJob is the fan-out job of a scheduled push.
func (s *Service) scheduledJob(p herald.Push) FanoutArgs {
	return FanoutArgs{PushID: p.ID, SendAt: *p.ScheduledAt, RunAt: *p.ScheduledAt, High: p.High()}
}

// gone turns "not found" into success: the app or push was deleted, and
// with it the work.
func gone(err error) error {
	if errors.Is(err, herald.ErrNotFound) {
		return nil
	}
	return err
}

// serviceAccount opens an app's sealed service-account file.
func (s *Service) serviceAccount(app herald.App) ([]byte, error) {
	return s.cfg.MasterKey.Open(app.FCMCredentials)
}

// EditScheduled applies an operator's change to a scheduled push; a moved
// send time replaces the push's job.
func (s *Service) EditScheduled(ctx context.Context, pushID string, c herald.PushChange) (herald.Push, error) {
	st := herald.PushStep{Kind: herald.StepEdit, At: s.cfg.Now(), Change: c}
	if c.ScheduledAt != nil {
		st.Job = s.scheduledJob(herald.Push{ID: pushID, ScheduledAt: c.ScheduledAt})
	}
	p, _, err := s.cfg.Store.StepPush(ctx, pushID, st)
	return p, err
}

// CancelScheduled cancels a scheduled push and refunds its charge, the
// deferred part of a sending push (herald.NightDefer) and refunds its
// users, or a held push: one cancel step, judged on the push as stored
// (herald.Push.Apply).
func (s *Service) CancelScheduled(ctx context.Context, pushID string) (herald.Push, error) {
	p, e, err := s.cfg.Store.StepPush(ctx, pushID, herald.PushStep{Kind: herald.StepCancel, At: s.cfg.Now(),
		Job: FinishArgs{PushID: pushID}})
	if err != nil || e.Suppress == nil {
		return p, err
	}
	return s.deferredCancelled(ctx, p, e.Closed)
}
