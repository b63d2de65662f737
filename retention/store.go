package retention

import (
	"context"
	"time"
)

// Kinds name what a retention run deletes, as it logs and counts
// them (herald_retention_deleted_total{kind}).
const (
	RetainedPushes       = "push_bodies" // pushes whose body was cleared
	RetainedDeliveries   = "deliveries"
	RetainedChunks       = "chunks" // chunk slots, a chunk's at a time
	RetainedEvents       = "events" // events and pending events
	RetainedUnreachable  = "unreachable"
	RetainedRecipients   = "recipients" // per-recipient rows of older pushes
	RetainedIdempotency  = "idempotency_keys"
	RetainedConsent      = "consent_records"
	RetainedAccessRecord = "access_records"
	// RetainedDeliveryEvents are delivery events left queued
	// herald.EventsKeptFor (their receiver never took them).
	RetainedDeliveryEvents = "delivery_events"
	// RetainedReceipts are frequency-cap receipts older than
	// herald.CapRetention.
	RetainedReceipts = "marketing_receipts"
)

// Kinds lists every kind, in the order a run's log line gives them.
var Kinds = []string{RetainedPushes, RetainedDeliveries, RetainedChunks, RetainedEvents, RetainedUnreachable,
	RetainedRecipients, RetainedIdempotency, RetainedConsent, RetainedAccessRecord, RetainedDeliveryEvents, RetainedReceipts}

// Deleted counts what a retention step deleted, by kind.
type Deleted map[string]int64

// Add adds o's counts.
func (d Deleted) Add(o Deleted) {
	for k, n := range o {
		d[k] += n
	}
}

// Total is the number of things deleted.
func (d Deleted) Total() int64 {
	var t int64
	for _, n := range d {
		t += n
	}
	return t
}

// Store is what the retention worker needs of storage. Each
// step writes one short transaction on the store's bulk lane, deleting at
// most limit rows (the worker sizes limit so that none holds the writer
// long), and says what it deleted, whether there is more to do and how
// long it held the writer.
type Store interface {
	// ExpirePushes clears the body of up to limit pushes that finished
	// (done, failed or cancelled) at or before before: their title,
	// content, links, recipients and the body fields of their edit trail
	// (see herald.ExpireEdits). Their counts are kept as they were (herald.Push.Counts),
	// and their rows are queued for PruneExpired.
	ExpirePushes(ctx context.Context, before, now time.Time, limit int) (Step, error)
	// PruneExpired deletes up to limit of the rows expired pushes left:
	// deliveries, chunks and their slots, events, unreachable users.
	PruneExpired(ctx context.Context, limit int) (Step, error)
	// PruneIdempotency deletes up to limit idempotency keys made at or
	// before before (expired keys left by an app that sent no keyed push
	// since).
	PruneIdempotency(ctx context.Context, before time.Time, limit int) (Step, error)
	// PruneDeliveryEvents deletes up to limit delivery events queued
	// before before, oldest first.
	PruneDeliveryEvents(ctx context.Context, before time.Time, limit int) (Step, error)
	// PruneReceipts deletes up to limit frequency-cap receipts made
	// before before (herald.MarketingCap).
	PruneReceipts(ctx context.Context, before time.Time, limit int) (Step, error)
	// PruneConsentTrail deletes consent records made before before that
	// are not the latest of their pair (a user's own, or a device's) and
	// whose event is not pending, among the next limit records older than
	// before from the cursor on (in the order of their time); next is
	// where to go on.
	PruneConsentTrail(ctx context.Context, before time.Time, from TrailCursor, limit int) (step Step, next TrailCursor, err error)
	// RetentionRun reads the state of the current run (a zero one when
	// none was saved); SaveRetentionRun stores it.
	RetentionRun(ctx context.Context) (Run, error)
	SaveRetentionRun(ctx context.Context, r Run) error
}

// Step is what one step of retention did.
type Step struct {
	Deleted Deleted
	// More reports that there is more of the step's kind to do.
	More bool
	// Held is how long its transaction held the store's writer (real
	// time, from its first statement to its commit).
	Held time.Duration
}

// Run is the state of a day's retention run, kept between the
// job runs that make it up.
type Run struct {
	// Day is the UTC date the run is for; Began when it began.
	Day   string    `json:"day"`
	Began time.Time `json:"began"`
	// Done is set once nothing was left to delete (and the space freed
	// was given back).
	Done bool `json:"done"`
	// Deleted counts what the run deleted so far.
	Deleted Deleted `json:"deleted"`
	// Longest is how long the run's longest step held the writer, and
	// LongestStep which kind of step it was.
	Longest     time.Duration `json:"longest"`
	LongestStep string        `json:"longestStep,omitempty"`
	// Trail is how far the run went through the consent trail.
	Trail TrailCursor `json:"trail"`
}

// TrailCursor is a place in the consent trail in the order of its
// records' time: after the record id made at At (ms).
type TrailCursor struct {
	At int64 `json:"at"`
	ID int64 `json:"id"`
}
