package herald

import (
	"context"
	"time"
)

// EventType is what a device reports about a push sent to it.
type EventType string

// The event types of POST /api/sdk/v2/events.
const (
	EventReceived EventType = "received"
	EventOpened   EventType = "opened"
)

// EventTypes are the event types, in the order metrics list them.
var EventTypes = []EventType{EventReceived, EventOpened}

// Valid reports whether t is one of the event types.
func (t EventType) Valid() bool { return t == EventReceived || t == EventOpened }

// Limits of the events endpoint (DESIGN section 7).
const (
	// MaxEvents is the most events one report may carry.
	MaxEvents = 100
	// EventLead is how far ahead of the server's clock an event may be
	// (a device's clock runs a little fast); later ones are ignored.
	EventLead = 5 * time.Minute
	// EventMaxAge is how old an event may be; older ones are ignored.
	EventMaxAge = 30 * 24 * time.Hour
)

// Event is one thing a device reports about a push: it was received, or
// opened, at At.
type Event struct {
	PushID string
	Type   EventType
	At     time.Time
}

// Timely reports whether an event may count when reported at now: at most
// EventLead ahead and at most EventMaxAge old.
func (e Event) Timely(now time.Time) bool {
	return !e.At.After(now.Add(EventLead)) && !e.At.Before(now.Add(-EventMaxAge))
}

// EventMark is one fact the store records at most once per push, device
// and type: that the device received, or opened, the push.
type EventMark struct {
	PushID string
	Type   EventType
	At     time.Time
	// Stream: the app takes the mark's webhook event (push.received or
	// push.opened), queued with the mark when it is recorded.
	Stream bool
}

// EventPlan is what a device's report comes to: the marks to record, and
// for each event the mark whose recording makes it accepted.
type EventPlan struct {
	Marks []EventMark
	// own[i] indexes Marks for event i; -1 when the event is ignored
	// without asking the store (untimely).
	own []int
}

// PlanEvents turns a report into marks: each timely event records its own
// mark, and an opened one records received too (a device that opened a
// push received it), ahead of its own. Whether each counts is the store's
// answer (see Accepted): a mark recorded before, or for a push not sent
// to the device, is not recorded again.
func PlanEvents(events []Event, now time.Time) EventPlan {
	p := EventPlan{Marks: make([]EventMark, 0, len(events)), own: make([]int, len(events))}
	for i, e := range events {
		if !e.Timely(now) {
			p.own[i] = -1
			continue
		}
		if e.Type == EventOpened {
			p.Marks = append(p.Marks, EventMark{PushID: e.PushID, Type: EventReceived, At: e.At})
		}
		p.own[i] = len(p.Marks)
		p.Marks = append(p.Marks, EventMark{PushID: e.PushID, Type: e.Type, At: e.At})
	}
	return p
}

// Accepted returns, for each event of the plan, whether it counted: its
// own mark was recorded now (recorded is the store's answer for Marks).
func (p EventPlan) Accepted(recorded []bool) []bool {
	out := make([]bool, len(p.own))
	for i, m := range p.own {
		out[i] = m >= 0 && m < len(recorded) && recorded[m]
	}
	return out
}

// EventStore records what devices report about the pushes sent to them.
type EventStore interface {
	// RecordEvents records the marks a device of the app reports, each at
	// most once per push, device and type, and returns for each whether
	// it was recorded now. Not recorded (false): a mark recorded before
	// (or earlier in marks), and one whose push is unknown, another app's,
	// or was not sent to the device (so an unknown device too). Sent
	// means FCM accepted the push's message for the device: a device
	// planned but waiting, deferred, cancelled, suppressed or failed was
	// not. A mark for a send still in flight is recorded (true) as
	// pending and counts once the send is recorded sent, never if it
	// ends otherwise. A device is the device id the push was planned
	// for (a reinstall's new id is not it; see docs/events.md). A
	// recorded mark counts in its push's Counts.Received or Opened. It
	// returns only once the recorded marks are committed.
	RecordEvents(ctx context.Context, appID, deviceID string, marks []EventMark) ([]bool, error)
}
