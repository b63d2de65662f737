package herald

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Outcome is what became of a push for one user, in a user's export
// (DESIGN 12): the best of its deliveries to the user's devices.
type Outcome string

// The outcomes, best first (UserOutcome).
const (
	// OutcomeSent: a device of the user was sent the push once.
	OutcomeSent Outcome = "sent"
	// OutcomeResent: sent, and possibly twice (Delivery.Resent).
	OutcomeResent Outcome = "resent"
	// OutcomePending: not sent yet (deferred to the morning, waiting its
	// turn, or in flight).
	OutcomePending           Outcome = "pending"
	OutcomeFailed            Outcome = "failed"
	OutcomeSuppressedNight   Outcome = "suppressed_night"
	OutcomeSuppressedConsent Outcome = "suppressed_consent"
	// OutcomeSuppressedCap: skipped by the app's frequency cap.
	OutcomeSuppressedCap Outcome = "suppressed_cap"
	// OutcomeUnreachable: no device of the user could be sent it (spec 6's
	// unreachable users).
	OutcomeUnreachable Outcome = "unreachable"
)

// outcomeRank orders the outcomes, best first.
var outcomeRank = []Outcome{OutcomeSent, OutcomeResent, OutcomePending, OutcomeFailed,
	OutcomeSuppressedNight, OutcomeSuppressedConsent, OutcomeSuppressedCap, OutcomeUnreachable}

// Outcome is the outcome of one delivery: what a push's recipients
// export (DESIGN 15) says of its device, and what UserOutcome ranks.
func (d Delivery) Outcome() Outcome {
	switch d.State {
	case DeliverySent:
		if d.Resent {
			return OutcomeResent
		}
		return OutcomeSent
	case DeliveryFailed:
		return OutcomeFailed
	case DeliveryUndeliverable:
		return OutcomeUnreachable
	case DeliverySuppressedConsent:
		return OutcomeSuppressedConsent
	case DeliverySuppressedNight:
		return OutcomeSuppressedNight
	case DeliverySuppressedCap:
		return OutcomeSuppressedCap
	}
	return OutcomePending
}

// UserOutcome is the outcome of a push for a user from its deliveries to
// the user's devices: the best of theirs (a user sent the push on one
// device was sent it); unreachable when there are none (the user had no
// device the push could go to).
func UserOutcome(ds []Delivery) Outcome {
	best := len(outcomeRank) - 1
	for _, d := range ds {
		for i, o := range outcomeRank[:best] {
			if o == d.Outcome() {
				best = i
				break
			}
		}
	}
	return outcomeRank[best]
}

// UserPush is a push sent (or meant) to a user, as the user's export shows
// it: when it was sent (or accepted, when it has not started), its title,
// what became of it for the user, and when the user's first device
// reported it received and opened.
type UserPush struct {
	PushID string
	At     time.Time
	// Title is the title the user was sent; nil once the push's body
	// has expired.
	Title      *string
	Outcome    Outcome
	ReceivedAt *time.Time
	OpenedAt   *time.Time
}

// ExportStore reads what a user's export (DESIGN 12) needs beyond the
// user, its devices and its consent trail.
type ExportStore interface {
	// UserPushes returns the pushes sent to a user, or that could not
	// reach it, newest first, read by the user (never by scanning the
	// pushes' chunks); none for a user no push was meant for.
	UserPushes(ctx context.Context, appID, userID string) ([]UserPush, error)
	// EachDeviceOutcome calls fn with a push's recipients export a page
	// at a time (each page's memory bounded, whatever the push's size):
	// each delivery the push planned once, in the order it planned
	// them, then the users it found no device of. A page is fn's until
	// it returns. None for an unknown push.
	EachDeviceOutcome(ctx context.Context, pushID string, fn func([]DeviceOutcome) error) error
}

// DeviceOutcome is a line of a push's recipients export (DESIGN 15): a
// device the push was planned for and what became of it, or a user it
// found no device of (DeviceID and TokenSuffix "", OutcomeUnreachable).
// SentAt is when FCM accepted its send, nil when it was not sent or was
// sent before Herald kept the time; ReceivedAt and OpenedAt are the
// device's reports (docs/events.md).
type DeviceOutcome struct {
	UserID, DeviceID, TokenSuffix string
	Outcome                       Outcome
	SentAt, ReceivedAt, OpenedAt  *time.Time
}

// MaxDownloadReason bounds the reason a download of personal data is
// given, in characters.
const MaxDownloadReason = 500

// DownloadReasonProblem checks the reason a download of personal data
// (DESIGN 12: a user's export, access records as JSONL) is given: required,
// not blank, at most MaxDownloadReason characters. nil when it is fine.
func DownloadReasonProblem(reason string) *Detail {
	switch {
	case strings.TrimSpace(reason) == "":
		return &Detail{Field: "reason", Reason: "is required: say why the data is downloaded"}
	case !utf8.ValidString(reason):
		return &Detail{Field: "reason", Reason: ReasonInvalidUTF8}
	case utf8.RuneCountInString(reason) > MaxDownloadReason:
		return &Detail{Field: "reason", Reason: fmt.Sprintf("must be at most %d characters", MaxDownloadReason)}
	}
	return nil
}
