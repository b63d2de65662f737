package herald

import (
	"errors"
	"slices"
	"time"
)

// DeliveryState is where one token's delivery of a push stands.
type DeliveryState string

// The delivery states. Pending, inflight and retry are open; the rest final.
// Inflight marks a send whose answer was not yet recorded: met again after a
// crash, the token is sent again and the delivery marked resent.
const (
	DeliveryPending           DeliveryState = "pending"
	DeliveryInflight          DeliveryState = "inflight"
	DeliveryRetry             DeliveryState = "retry"
	DeliverySent              DeliveryState = "sent"
	DeliveryFailed            DeliveryState = "failed"
	DeliveryUndeliverable     DeliveryState = "undeliverable"
	DeliverySuppressedConsent DeliveryState = "suppressed_consent"
	DeliverySuppressedNight   DeliveryState = "suppressed_night"
)

// OpenDeliveryStates are the states of a delivery without an outcome yet.
var OpenDeliveryStates = []DeliveryState{DeliveryPending, DeliveryInflight, DeliveryRetry}

// Final reports whether the state is an outcome.
func (s DeliveryState) Final() bool { return !slices.Contains(OpenDeliveryStates, s) }

// The reasons a user is reported unreachable (spec section 6).
const (
	ReasonNoToken      = "NO_TOKEN"
	ReasonTokenExpired = "TOKEN_EXPIRED"
	ReasonAppDeleted   = "APP_DELETED"
)

// TokenExpiryAge is how long after its last refresh an unregistered token
// counts as expired rather than as an app deleted.
const TokenExpiryAge = 270 * 24 * time.Hour

// Delivery is one token's delivery of a push.
type Delivery struct {
	Seq              int
	RecipientIdx     int
	UserID           string
	DeviceID         string
	Token            string
	Platform         Platform
	AppSourceVersion string
	TokenUpdatedAt   time.Time
	Chunk            int
	State            DeliveryState
	// Reason is the unreachable reason of an undeliverable token.
	Reason   string
	Error    string
	Attempts int
	Resent   bool
	// OldForBadge and OldForImage mark a device whose app version cannot
	// show the badge or image the message carries; it is sent anyway.
	OldForBadge bool
	OldForImage bool
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
	Pending []Delivery
	// Open are the chunk's rows without an outcome: retries, sends cut
	// off, and slots a crash left in flight (sent again, they are
	// recorded as resent).
	Open []Delivery
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
	Rows []Delivery
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

// CountState adds n deliveries in state to the token counters: every one
// is a token targeted; sent ones (resent included) are sent, failed and
// dead ones failed, suppressed ones suppressed by consent or the night.
func (c *Counts) CountState(state DeliveryState, n int) {
	c.Tokens += n
	switch state {
	case DeliverySent:
		c.Sent += n
	case DeliveryFailed, DeliveryUndeliverable:
		c.Failed += n
	case DeliverySuppressedConsent:
		c.SuppressedConsent += n
	case DeliverySuppressedNight:
		c.SuppressedNight += n
	}
}

// CountDeliveries derives a push's token counters from its deliveries.
func CountDeliveries(ds []Delivery) Counts {
	var c Counts
	for _, d := range ds {
		c.CountState(d.State, 1)
	}
	return c
}

// Outcome is the result of one send, to be recorded.
type Outcome struct {
	Seq    int
	State  DeliveryState
	Reason string
	Error  string
	// DropDevice deletes the device (its token is dead); Token guards against
	// deleting a device that registered a new token meanwhile.
	DropDevice bool
	DeviceID   string
	Token      string
}

// Unreachable is a user a push could not reach, and why.
type Unreachable struct {
	UserID string `json:"userId"`
	Reason string `json:"reason"`
}

// UnreachableUsers returns, in request order, the requested users the push
// could not reach: those with no token (NO_TOKEN), and those none of whose
// tokens was sent and at least one of whose tokens turned out dead. A user
// with a sent or suppressed token is not unreachable. Pure, so both engines
// share it.
func UnreachableUsers(requested []string, ds []Delivery) []Unreachable {
	type seen struct {
		reached bool
		reason  string
	}
	users := make(map[string]*seen, len(requested))
	for _, d := range ds {
		u := users[d.UserID]
		if u == nil {
			u = &seen{}
			users[d.UserID] = u
		}
		if d.State != DeliveryUndeliverable {
			u.reached = true
		} else if u.reason == "" {
			u.reason = d.Reason
		}
	}
	var out []Unreachable
	done := make(map[string]bool, len(requested))
	for _, id := range requested {
		if done[id] {
			continue
		}
		done[id] = true
		switch u := users[id]; {
		case u == nil:
			out = append(out, Unreachable{UserID: id, Reason: ReasonNoToken})
		case !u.reached:
			out = append(out, Unreachable{UserID: id, Reason: u.reason})
		}
	}
	return out
}

// Failure is a failed delivery in a push's detail.
type Failure struct {
	UserID string `json:"userId"`
	Token  string `json:"token"`
	Error  string `json:"error"`
}
