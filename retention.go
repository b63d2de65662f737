package herald

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Retention (DESIGN section 12): what Herald keeps, and for how long.
const (
	// DefaultRetentionDays is how long the rows and body of a finished
	// push are kept when HERALD_RETENTION_DAYS is not set.
	DefaultRetentionDays = 400
	// MinRetentionDays is the shortest retention accepted: a month of
	// history is what an operator needs to answer for a campaign.
	MinRetentionDays = 31
	// ConsentTrailDays is how long the consent trail keeps the records
	// that are not a pair's latest (its latest is kept whatever its age).
	ConsentTrailDays = 730
	// AccessRecordDays is how long access records are kept.
	AccessRecordDays = 730
)

// ParseRetentionDays reads HERALD_RETENTION_DAYS: a whole number of days,
// at least MinRetentionDays.
func ParseRetentionDays(v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < MinRetentionDays {
		return 0, fmt.Errorf("%q is not a whole number of days of at least %d", v, MinRetentionDays)
	}
	return n, nil
}

// Days is a number of whole days as a duration.
func Days(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }

// RetentionKinds name what a retention run deletes, as it logs and counts
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
)

// RetentionKinds lists every kind, in the order a run's log line gives them.
var RetentionKinds = []string{RetainedPushes, RetainedDeliveries, RetainedChunks, RetainedEvents, RetainedUnreachable,
	RetainedRecipients, RetainedIdempotency, RetainedConsent, RetainedAccessRecord}

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

// RetentionStore is what the retention worker needs of storage. Each
// step writes one short transaction on the store's bulk lane, deleting at
// most limit rows (the worker sizes limit so that none holds the writer
// long), and says what it deleted, whether there is more to do and how
// long it held the writer.
type RetentionStore interface {
	// ExpirePushes clears the body of up to limit pushes that finished
	// (done, failed or cancelled) at or before before: their title,
	// content, links, recipients and the body fields of their edit trail
	// (see ExpireEdits). Their counts are kept as they were (Push.Counts),
	// and their rows are queued for PruneExpired.
	ExpirePushes(ctx context.Context, before, now time.Time, limit int) (RetentionStep, error)
	// PruneExpired deletes up to limit of the rows expired pushes left:
	// deliveries, chunks and their slots, events, unreachable users.
	PruneExpired(ctx context.Context, limit int) (RetentionStep, error)
	// PruneIdempotency deletes up to limit idempotency keys made at or
	// before before (expired keys left by an app that sent no keyed push
	// since).
	PruneIdempotency(ctx context.Context, before time.Time, limit int) (RetentionStep, error)
	// PruneConsentTrail deletes consent records made before before that
	// are not the latest of their pair (a user's own, or a device's) and
	// whose event is not pending, among the next limit records older than
	// before from the cursor on (in the order of their time); next is
	// where to go on.
	PruneConsentTrail(ctx context.Context, before time.Time, from TrailCursor, limit int) (step RetentionStep, next TrailCursor, err error)
	// RetentionRun reads the state of the current run (a zero one when
	// none was saved); SaveRetentionRun stores it.
	RetentionRun(ctx context.Context) (RetentionRun, error)
	SaveRetentionRun(ctx context.Context, r RetentionRun) error
}

// RetentionStep is what one step of retention did.
type RetentionStep struct {
	Deleted Deleted
	// More reports that there is more of the step's kind to do.
	More bool
	// Held is how long its transaction held the store's writer (real
	// time, from its first statement to its commit).
	Held time.Duration
}

// RetentionRun is the state of a day's retention run, kept between the
// job runs that make it up.
type RetentionRun struct {
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

// bodyFields are the edit trail's fields that hold a push's body.
var bodyFields = []string{"title", "content", "linkURL", "imageURL"}

// ExpireEdits returns a push's edit trail with the values of its body
// fields blanked: what an edit changed stays (and when), not the text
// the push no longer keeps.
func ExpireEdits(edits []Edit) []Edit {
	out := make([]Edit, len(edits))
	for i, e := range edits {
		e.Changes, e.From = blankBody(e.Changes), blankBody(e.From)
		out[i] = e
	}
	return out
}

func blankBody(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		for _, f := range bodyFields {
			if k == f {
				v = ""
			}
		}
		out[k] = v
	}
	return out
}
