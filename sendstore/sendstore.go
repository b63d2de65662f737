// Package sendstore is the protocol between delivery and the store it
// sends through (as River's riverdriver is between River and its
// engines): the pages of a push's fan-out, its chunks of slots and the
// steps that settle them, and Store, the guarded writes behind them. The
// words (chunk, slot, window, settled, in flight, retry chunk) are
// delivery's; see its package documentation.
//
// The chunk machine lives here, where both sides see it: Chunk is a
// chunk's state (its Range, and Stopped once its push failed), and
// Chunk.Apply(step, facts) its one transition, pure and tested without a
// database. A ChunkStep settles the slots whose sends came back (rows,
// counts, a RetryChunk) and marks the next ones in flight (Targets); the
// Facts are what the store loads for it (the targets' devices, the retry
// chunk's number); the Effects are the writes it makes besides the new
// range. Store.AdvanceChunk loads, applies and persists; it decides
// nothing itself. A retry chunk's job is a value (ChunkJob) that takes
// the chunk's number once the step has one.
package sendstore

import (
	"context"
	"errors"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/audience"
)

// Fanout is one page of a push's fan-out: its deliveries (seq and chunk
// numbers continue From's; the pending ones become their chunks' slots, in
// order of seq, the final ones rows) and the jobs that send its chunks
// (none for a chunk its fan-out's job sends itself). A page is recorded
// only where the fan-out still stands at From, and leaves it at To; the
// last page (More false) ends the fan-out, and Finish is queued with it
// when no chunk is left open. A topic or all-users push also
// records the users it targets (To.Users in all), and its charge for this
// page's new ones.
type Fanout struct {
	From, To   FanoutCursor
	More       bool
	Deliveries []herald.Delivery
	Jobs       []herald.Job
	Finish     herald.Job
	// Charge is what the page's new users cost (herald.App.PushCharge):
	// added to the push's cost, its ledger entries written as given.
	Charge herald.Charge
	// Deferred are the page's chunks that wait for the morning (see
	// herald.NightDefer) or for their zone's time (a local-time push's zone
	// parts); their jobs are among Jobs.
	Deferred []DeferredChunk
	// LateLocal counts the page's devices of a local-time push sent at
	// once, their zone's time having passed at the push's accept: added
	// to the push's counts.lateLocal.
	LateLocal int
	// SpreadUsers is, on a spread push's first page, how many users its
	// fan-out counted (herald.Push.SpreadUsers), recorded with the start.
	SpreadUsers int
}

// FanoutCursor is how far a push's fan-out has gone: the devices read, and
// the seqs, chunks and targeted users (topic and all-users pushes: each
// user, and each device no user is mapped to) recorded so far.
type FanoutCursor struct {
	After      DeviceCursor
	Seq, Chunk int
	Users      int
}

// Start reports whether the cursor is the fan-out's start.
func (c FanoutCursor) Start() bool {
	return c.After == (DeviceCursor{}) && c.Seq == 0 && c.Chunk == 0
}

// DeviceCursor is a position in the order in which a topic or all-users
// push reads an app's devices: first those no user is mapped to, by id,
// then the mapped ones by user and id, so that a user's devices follow
// each other. The zero cursor is before the first device.
type DeviceCursor struct {
	Mapped   bool
	UserID   string
	DeviceID string
}

// Selection is which of an app's devices a topic, all-users or segment
// push's fan-out reads: those subscribed to Topic (every device when ""),
// and of those the ones whose (user, device) pair the Filter holds for at
// Now, the clock its lastSeenDays counts from (every one when Filter is
// nil). Now matters only with a Filter; a fan-out's pages should share
// one, so that a device does not leave or join the audience between pages.
type Selection struct {
	Topic  string
	Filter *audience.Filter
	Now    time.Time
}

// Store is what the send path needs: the devices a push goes to,
// and every transition of its fan-out, chunks, deliveries and end. Each
// transition is a guarded write, correct with several writers at once.
type Store interface {
	// DevicesByID returns those of the devices that still exist.
	DevicesByID(ctx context.Context, appID string, deviceIDs []string) (map[string]herald.Device, error)
	// DevicePage returns, in DeviceCursor's order, at most limit of the
	// app's devices after the cursor that the selection selects, and the
	// cursor after the last one returned. Fewer than limit means there
	// are no more.
	DevicePage(ctx context.Context, appID string, sel Selection, after DeviceCursor, limit int) ([]herald.Device, DeviceCursor, error)
	// CountSelected counts the users of the app's devices the selection
	// selects now, as a fan-out's cursor counts them (FanoutCursor.Users):
	// each mapped user once, each device no user is mapped to as one.
	CountSelected(ctx context.Context, appID string, sel Selection) (int, error)
	// DevicesOfUsers returns the devices mapped to each of the users.
	DevicesOfUsers(ctx context.Context, appID string, userIDs []string) (map[string][]herald.Device, error)
	// TagsOfUsers returns the named tags of each of the users that has
	// any: what a push's templates read when it is sent.
	TagsOfUsers(ctx context.Context, appID string, userIDs, names []string) (map[string]audience.Tags, error)
	// DeviceByToken returns the app's device that holds the token now.
	// ErrNotFound when none does.
	DeviceByToken(ctx context.Context, appID, token string) (herald.Device, error)
	// FanoutProgress returns where a push's fan-out stands, and whether it
	// has ended. ErrNotFound.
	FanoutProgress(ctx context.Context, pushID string) (FanoutCursor, bool, error)
	// StartSending records a page of a push's fan-out. The first page
	// (From the zero cursor) starts a push still waiting for its fan-out
	// (AwaitingFanout); the others continue a sending push whose fan-out
	// has not ended and stands at From. It returns false when the push was
	// not there, so of several fan-outs at once exactly one records each
	// page; ErrNotFound for an unknown push. The push's finish is queued
	// with its last page when every chunk completed already; otherwise
	// CompleteChunk tells the run of the last chunk to finish it.
	StartSending(ctx context.Context, pushID string, f Fanout) (bool, error)
	// ResumeChunk returns the chunk's work: its range, and its slots from
	// the cursor on (none once the push failed). A chunk that was never
	// recorded has no work.
	ResumeChunk(ctx context.Context, pushID string, chunk int) (ChunkWork, error)
	// AdvanceChunk writes one step of a chunk's progress in one
	// transaction: it loads the chunk and the step's Facts (the targets'
	// devices, the retry chunk's number), applies the step (Chunk.Apply,
	// which says what the step does) and persists the result. It returns
	// where the range now ends, and stopped when the push failed: then
	// nothing more is marked, and the retry chunk's slots are recorded
	// failed instead. ErrChunkMoved, writing nothing, when the chunk's
	// range is no longer step.Old.
	AdvanceChunk(ctx context.Context, appID, pushID string, step ChunkStep) (marked int, stopped bool, err error)
	// CompleteChunk marks a chunk finished and reports whether the push
	// is left to finish: the chunk was the last one open (of several
	// completions at once, exactly one is told so), or it was completed
	// already, nothing of the push is open and it has not finished (a
	// run after a crash between the last completion and the finish).
	// The caller then finishes the push, which records once
	// (FinishPush) however many finish it.
	CompleteChunk(ctx context.Context, pushID string, chunk int) (bool, error)
	// FailPush ends a push that cannot be sent: its chunks stop, every
	// slot not yet settled failing with the reason, and finish is
	// inserted.
	FailPush(ctx context.Context, pushID, reason string, finish herald.Job) error
	// Deliveries returns every delivery of a push.
	Deliveries(ctx context.Context, pushID string) ([]herald.Delivery, error)
	// DeliveriesOf returns the deliveries of a push to the users, by seq.
	DeliveriesOf(ctx context.Context, pushID string, userIDs []string) ([]herald.Delivery, error)
	// UndeliverableUsers returns the users with a delivery of the push
	// that is undeliverable, each once.
	UndeliverableUsers(ctx context.Context, pushID string) ([]string, error)
	// CappedUsers returns those of the users a capped marketing push
	// may not reach under claim (herald.CapClaim.Refuses): already at the
	// cap with receipts of other pushes, and holding none of this one.
	CappedUsers(ctx context.Context, appID, pushID string, userIDs []string, claim herald.CapClaim) (map[string]bool, error)
	// ReceiptUsers returns the users holding a receipt of the push.
	ReceiptUsers(ctx context.Context, pushID string) ([]string, error)
	// ReleaseReceipts gives back the push's receipts of the users (none
	// of their deliveries was sent).
	ReleaseReceipts(ctx context.Context, pushID string, userIDs []string) error
	// FinishPush records the unreachable users and the push's end (done,
	// unless it already failed), with the follow-up jobs. It returns false
	// when the push had already finished: exactly one finish records.
	FinishPush(ctx context.Context, pushID string, unreachable []herald.Unreachable, follow []herald.Job) (bool, error)
}

// ErrChunkMoved is a step of a chunk's progress written against a range
// the chunk no longer has: another run of its job wrote meanwhile, and
// this one must send nothing more.
var ErrChunkMoved = errors.New("herald: the chunk's cursor moved")

// Range is where a chunk's sends stand: every slot before Settled (the
// cursor) is settled; those from Settled up to Marked are in flight.
type Range struct {
	Settled, Marked int
}

// ChunkWork is a chunk as a run of its send job finds it.
type ChunkWork struct {
	Range
	// Slots are the chunk's slots from Settled on, in order: Slots[i] is
	// at position Settled+i. Those before Marked were in flight when a run
	// stopped: a send of each may have reached FCM.
	Slots []herald.Delivery
	// Stopped: the push failed; nothing of the chunk is to be sent.
	Stopped bool
	// MovedAt is when the chunk's range last moved (zero: never).
	MovedAt time.Time
}

// SlotTarget is a slot about to be sent: its position in its chunk, and
// the device and token it was resolved to at send time. Owner, when set,
// is the user the device must still be mapped to as it is marked.
type SlotTarget struct {
	Pos      int
	DeviceID string
	Token    string
	Owner    *string
	// CapUser, set on a step with a Cap, is the user whose receipt of the
	// push the send claims ("" for none: not marketing, or no user).
	CapUser string
}

// ChunkStep is one write of a chunk's progress: the slots whose sends
// came back are settled, and the next slots are marked in flight.
type ChunkStep struct {
	Chunk int
	// Old is the chunk's range as last written; the step applies only
	// while the chunk still has it.
	Old Range
	// New is the range the step writes: New.Settled, from Old.Settled up
	// to Old.Marked, is the new cursor; New.Marked, from Old.Marked on,
	// the in-flight end asked for (it may end sooner, see Chunk.Apply).
	New Range
	// Rows are the settled slots whose outcome is not a first send: any
	// outcome but sent, or a send of a slot that may have been sent
	// before (Resent), as they are recorded (state, reason, error, the
	// device and token sent to).
	Rows []herald.Delivery
	// Retry are the settled slots to be sent again, as a retry chunk.
	Retry *RetryChunk
	// Drop are the dead tokens found among the settled sends.
	Drop []DeadToken
	// SentOldBadge and SentOldImage count the slots settled as sent
	// without a row whose app version was too old for the badge or the
	// image.
	SentOldBadge, SentOldImage int
	// Targets are the slots from Old.Marked up to New.Marked that are to
	// be sent (the others were judged final), in order of position.
	Targets []SlotTarget
	// Stream, when set, says which of the outcomes the step settles
	// become delivery events of its app (DESIGN section 15); nil for
	// none. Sent are then the slots settled as first sends (without a
	// row), as sent.
	Stream *Stream
	Sent   []herald.Delivery
	// Cap, when set, is the app's frequency cap as the step's targets
	// claim it: each target's CapUser holds a receipt of the push once
	// the step is written, or the target is refused (see Facts.Capped).
	Cap *herald.CapClaim
}

// Stream is what a step's delivery events need besides its outcomes:
// which types the app takes, and the push's request group.
type Stream struct {
	Sent, Failed   bool
	RequestGroupID string
}

// RetryChunk is the part of a step's settled slots that is sent again
// later, in a chunk of its own: retriable failures, and sends cut off or
// interrupted by a crash.
type RetryChunk struct {
	// Slots are as they will be sent: with the device and token last
	// resolved, Attempts (the failed attempts so far), Resent when a send
	// of it may have reached FCM, and Error, the last failure (recorded
	// when the push failed meanwhile and nothing is sent again).
	Slots []herald.Delivery
	// Job is the new chunk's send job, due when its slots are to be
	// sent; the step's transaction numbers it with the chunk.
	Job ChunkJob
}

// ChunkJob is the send job of a chunk not numbered yet.
type ChunkJob interface {
	// ForChunk returns the job of the chunk numbered chunk.
	ForChunk(chunk int) herald.Job
}

// DeadToken is a token a send found dead: its device is deleted, but only
// while it still holds that token.
type DeadToken struct {
	DeviceID, Token string
}
