// Package sendstore is the protocol between delivery and the store it
// sends through (as River's riverdriver is between River and its
// engines): the pages of a push's fan-out, its chunks of slots and the
// steps that settle them, and Store, the guarded writes behind them. The
// words (chunk, slot, window, settled, in flight, retry chunk) are
// delivery's; see its package documentation.
package sendstore

import (
	"context"
	"errors"

	"github.com/heraldpush/herald"
)

// Fanout is one page of a push's fan-out: its deliveries (seq and chunk
// numbers continue From's; the pending ones become their chunks' slots, in
// order of seq, the final ones rows) and one job per chunk. A page is
// recorded only where the fan-out still stands at From, and leaves it at
// To; the last page (More false) ends the fan-out, and Finish is queued
// with it when no chunk is left open. A topic or all-users push also
// records the users it targets (To.Users in all), and its charge for this
// page's new ones.
type Fanout struct {
	From, To   FanoutCursor
	More       bool
	Deliveries []herald.Delivery
	Jobs       []herald.Job
	Finish     herald.Job
	ChargeHalf int64
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

// Store is what the send path needs: the devices a push goes to,
// and every transition of its fan-out, chunks, deliveries and end. Each
// transition is a guarded write, correct with several writers at once.
type Store interface {
	// DevicesByID returns those of the devices that still exist.
	DevicesByID(ctx context.Context, appID string, deviceIDs []string) (map[string]herald.Device, error)
	// DevicePage returns, in DeviceCursor's order, at most limit of the
	// app's devices after the cursor (with a topic, those subscribed to
	// it), and the cursor after the last one returned. Fewer than limit
	// means there are no more.
	DevicePage(ctx context.Context, appID, topic string, after DeviceCursor, limit int) ([]herald.Device, DeviceCursor, error)
	// DevicesOfUsers returns the devices mapped to each of the users.
	DevicesOfUsers(ctx context.Context, appID string, userIDs []string) (map[string][]herald.Device, error)
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
	// once its last page is recorded and every chunk completed.
	StartSending(ctx context.Context, pushID string, f Fanout) (bool, error)
	// ResumeChunk returns the chunk's work. Slots a run marked in flight
	// and never settled (it died) first become open rows in flight: sent
	// again, they are recorded as resent. A chunk that was never recorded
	// has no work.
	ResumeChunk(ctx context.Context, pushID string, chunk int) (ChunkWork, error)
	// AdvanceChunk writes one step of a chunk's progress and returns where
	// its in-flight range now ends: step.Marked+step.Mark, or the position
	// of the first target whose device no longer holds that token (or is
	// no longer mapped to its Owner), the slots before it marked and the
	// rest left to be judged again. Once the push failed nothing more is
	// marked. ErrChunkMoved, writing nothing, when the chunk's cursor or
	// range is no longer step.Settled and step.Marked.
	AdvanceChunk(ctx context.Context, appID, pushID string, step ChunkStep) (int, error)
	// MarkInflight records that open rows (ChunkWork.Open) are about to be
	// sent, each to the device and token it was resolved to now, and
	// returns the seqs it marked: a target whose device no longer holds
	// that token (or is no longer mapped to its Owner) is left as it was,
	// to be judged again; one in flight already is marked resent.
	MarkInflight(ctx context.Context, appID, pushID string, ts []SendTarget) ([]int, error)
	// RecordOutcomes records the send results of rows and drops dead
	// tokens.
	RecordOutcomes(ctx context.Context, appID, pushID string, os []Outcome) error
	// CompleteChunk marks a chunk finished and, when it was the last one,
	// inserts finish: once, however many complete at once.
	CompleteChunk(ctx context.Context, pushID string, chunk int, finish herald.Job) error
	// FailPush ends a push that cannot be sent: its open deliveries fail
	// with the reason, and finish is inserted.
	FailPush(ctx context.Context, pushID, reason string, finish herald.Job) error
	// Deliveries returns every delivery of a push.
	Deliveries(ctx context.Context, pushID string) ([]herald.Delivery, error)
	// DeliveriesOf returns the deliveries of a push to the users, by seq.
	DeliveriesOf(ctx context.Context, pushID string, userIDs []string) ([]herald.Delivery, error)
	// UndeliverableUsers returns the users with a delivery of the push
	// that is undeliverable, each once.
	UndeliverableUsers(ctx context.Context, pushID string) ([]string, error)
	// FinishPush records the unreachable users and the push's end (done,
	// unless it already failed), with the follow-up jobs. It returns false
	// when the push had already finished: exactly one finish records.
	FinishPush(ctx context.Context, pushID string, unreachable []herald.Unreachable, follow []herald.Job) (bool, error)
}

// SendTarget is a delivery about to be sent, to the device and token it
// was resolved to at send time. Owner, when set, is the user the device
// must still be mapped to as the send is marked in flight.
type SendTarget struct {
	Seq      int
	DeviceID string
	Token    string
	Owner    *string
}

// A chunk's deliveries are kept compactly: its slots (the deliveries left
// to send at the fan-out, in order) are stored together, with a cursor,
// Settled, and the end of an in-flight range, Marked. Every slot before
// Settled has an outcome: sent, unless the slot has a row of its own (rows
// are written only for outcomes other than sent). The slots from Settled
// up to Marked were marked in flight: a send may have reached FCM. So the
// common case writes nothing per token, and a crash can resend only the
// slots between the two.

// ErrChunkMoved is a step of a chunk's progress written against a cursor
// or in-flight range the chunk no longer has: another run of its job wrote
// meanwhile, and this one must send nothing more.
var ErrChunkMoved = errors.New("herald: the chunk's cursor moved")

// ChunkWork is a chunk as a run of its send job finds it.
type ChunkWork struct {
	// Settled is the chunk's cursor; Pending are its slots from there on,
	// in order: Pending[i] is at position Settled+i.
	Settled int
	Pending []herald.Delivery
	// Open are the chunk's rows without an outcome: retries, sends cut
	// off, and slots a crash left in flight (sent again, they are
	// recorded as resent).
	Open []herald.Delivery
}

// SlotTarget is a slot about to be sent: its position in its chunk, and
// the device and token it was resolved to at send time.
type SlotTarget struct {
	Pos int
	SendTarget
}

// ChunkStep is one write of a chunk's progress: the slots whose sends
// came back are settled, and the next slots are marked in flight.
type ChunkStep struct {
	Chunk int
	// Settled and Marked are the cursor and the in-flight end as last
	// written; the step applies only while the chunk still has them.
	Settled, Marked int
	// Settle is the new cursor (Settled <= Settle <= Marked): every slot
	// before it has an outcome.
	Settle int
	// Rows are the slots settled with an outcome other than sent, as they
	// are recorded (state, reason, error, the device and token sent to).
	Rows []herald.Delivery
	// Drop are the dead tokens found among the settled sends (DeviceID
	// and Token of outcomes with DropDevice).
	Drop []Outcome
	// SentOldBadge and SentOldImage count the slots settled as sent whose
	// app version was too old for the badge or the image.
	SentOldBadge, SentOldImage int
	// Mark is how many slots from Marked on are marked in flight; Targets
	// are those of them to be sent (the others were judged final), in
	// order of position.
	Mark    int
	Targets []SlotTarget
}

// Outcome is the result of one send, to be recorded.
type Outcome struct {
	Seq    int
	State  herald.DeliveryState
	Reason string
	Error  string
	// DropDevice deletes the device (its token is dead); Token guards against
	// deleting a device that registered a new token meanwhile.
	DropDevice bool
	DeviceID   string
	Token      string
}
