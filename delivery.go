package herald

import (
	"slices"
	"time"
)

// DeliveryState is where one token's delivery of a push stands.
type DeliveryState string

// The delivery states. Pending, inflight and retry are open (a slot not yet
// settled, marked in flight, or to be sent again); the rest final.
const (
	DeliveryPending           DeliveryState = "pending"
	DeliveryInflight          DeliveryState = "inflight"
	DeliveryRetry             DeliveryState = "retry"
	DeliverySent              DeliveryState = "sent"
	DeliveryFailed            DeliveryState = "failed"
	DeliveryUndeliverable     DeliveryState = "undeliverable"
	DeliverySuppressedConsent DeliveryState = "suppressed_consent"
	DeliverySuppressedNight   DeliveryState = "suppressed_night"
	// DeliverySuppressedCap: the user had received as many marketing
	// pushes as the app's frequency cap allows (MarketingCap).
	DeliverySuppressedCap DeliveryState = "suppressed_cap"
)

// openDeliveryStates are the states of a delivery without an outcome yet.
var openDeliveryStates = []DeliveryState{DeliveryPending, DeliveryInflight, DeliveryRetry}

// Final reports whether the state is an outcome.
func (s DeliveryState) Final() bool { return !slices.Contains(openDeliveryStates, s) }

// The reasons a user is reported unreachable (spec section 6).
const (
	ReasonNoToken      = "NO_TOKEN"
	ReasonTokenExpired = "TOKEN_EXPIRED"
	ReasonAppDeleted   = "APP_DELETED"
)

// ReasonPayloadTooLarge fails the delivery of a message whose rendered
// text (a push's templates filled for its user, DESIGN 13) grew its FCM
// payload past MaxFCMPayload: that delivery only, the others are sent.
const ReasonPayloadTooLarge = "PAYLOAD_TOO_LARGE"

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
	// Locale is the device's locale when the delivery was planned, kept
	// for a push with languages only: it chooses the device's entry
	// unless the send reads the device again (a marketing push does).
	Locale         string
	TokenUpdatedAt time.Time
	Chunk          int
	State          DeliveryState
	// Reason is the unreachable reason of an undeliverable token.
	Reason string
	Error  string
	// Attempts counts its sends that were answered: of a slot still to
	// send, the failed ones its backoff grows with; of an outcome, those
	// and the last.
	Attempts int
	// SentAt is when the send FCM accepted was recorded; zero when it
	// was not sent, or was sent before Herald kept the time (read by a
	// push's recipients export only).
	SentAt time.Time
	// Resent: a send of it may have reached FCM before (a run died or was
	// cut off with it in flight), so the token may have had it twice.
	Resent bool
	// OldForBadge and OldForImage mark a device whose app version cannot
	// show the badge or image the message carries; it is sent anyway.
	OldForBadge bool
	OldForImage bool
}

// CountState adds n deliveries in state to the token counters: every one
// is a token targeted; sent ones (resent included) are sent, failed and
// dead ones failed, suppressed ones suppressed by consent, the night or
// the frequency cap.
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
	case DeliverySuppressedCap:
		c.SuppressedCap += n
	}
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
