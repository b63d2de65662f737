package herald

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// WebhookEvent is a type of webhook event an app may take (its
// webhookEvents, DESIGN section 15).
type WebhookEvent string

// The webhook event types. push.undeliverable and consent.changed are
// messages of their own; the delivery events (DeliveryEvents) go out
// together, batched, as push.events messages.
const (
	WebhookUndeliverable WebhookEvent = "push.undeliverable"
	WebhookConsent       WebhookEvent = EventConsentChanged
	WebhookSent          WebhookEvent = "push.sent"
	WebhookFailed        WebhookEvent = "push.failed"
	WebhookReceived      WebhookEvent = "push.received"
	WebhookOpened        WebhookEvent = "push.opened"
	WebhookApproval      WebhookEvent = EventApprovalRequested
)

// WebhookEvents lists every webhook event type an app may ask for: a
// closed set, so adding a type is adding its line here.
var WebhookEvents = []WebhookEvent{WebhookUndeliverable, WebhookConsent, WebhookSent, WebhookFailed,
	WebhookReceived, WebhookOpened, WebhookApproval}

// DefaultWebhookEvents is the list of an app that set none; push.approval_requested
// joins it while the app's approval is on (WebhookEventList).
var DefaultWebhookEvents = []WebhookEvent{WebhookUndeliverable, WebhookConsent}

// DeliveryEvents are the types sent per device in push.events messages.
var DeliveryEvents = []WebhookEvent{WebhookSent, WebhookFailed, WebhookReceived, WebhookOpened}

// WebhookEventsBatch is the type of the message carrying delivery events.
const WebhookEventsBatch = "push.events"

// Bounds of a push.events message (DESIGN section 15): at most
// MaxEventsPerMessage events, the oldest waiting at most EventsBatchAge;
// a failed message is tried again after a wait doubling from a second up
// to EventsRetryCap; events are kept at most EventsKeptFor.
const (
	MaxEventsPerMessage = 1000
	EventsBatchAge      = time.Second
	EventsRetryCap      = 30 * time.Second
	EventsKeptFor       = 7 * 24 * time.Hour
)

// EventsRetry is how long the stream of an app's delivery events waits
// after its failures-th failed message in a row: 1 s, doubled each time,
// at most EventsRetryCap, so that a receiver back after hours is caught
// up within a minute.
func EventsRetry(failures int) time.Duration {
	if failures < 1 {
		return 0
	}
	if failures > 6 {
		return EventsRetryCap
	}
	return min(time.Second<<(failures-1), EventsRetryCap)
}

// Webhook is the webhook event type of a device's report of type t.
func (t EventType) Webhook() WebhookEvent {
	if t == EventOpened {
		return WebhookOpened
	}
	return WebhookReceived
}

// StreamMarks marks those of a plan's marks whose webhook events the app
// takes (EventMark.Stream).
func (a App) StreamMarks(marks []EventMark) {
	received, opened := a.Takes(WebhookReceived), a.Takes(WebhookOpened)
	if !received && !opened {
		return
	}
	for i := range marks {
		marks[i].Stream = marks[i].Type == EventOpened && opened || marks[i].Type == EventReceived && received
	}
}

// WebhookEventList returns the app's webhook event types: those it set,
// else DefaultWebhookEvents.
func (a App) WebhookEventList() []WebhookEvent {
	if a.WebhookEvents == nil {
		if a.Approval.On() {
			return append(slices.Clip(DefaultWebhookEvents), WebhookApproval)
		}
		return DefaultWebhookEvents
	}
	return a.WebhookEvents
}

// Takes reports whether the app is sent webhook events of type e: it has
// a webhook and e is on its list.
func (a App) Takes(e WebhookEvent) bool {
	return a.WebhookURL != "" && slices.Contains(a.WebhookEventList(), e)
}

// WebhookEventsProblems checks a webhookEvents list as given (each
// member's text): every one a known type, none twice. field names the
// member in the details.
func WebhookEventsProblems(field string, list []string) []Detail {
	known := make([]string, len(WebhookEvents))
	for i, e := range WebhookEvents {
		known[i] = string(e)
	}
	var d []Detail
	for i, s := range list {
		at := field + "[" + strconv.Itoa(i) + "]"
		switch {
		case !slices.Contains(known, s):
			d = append(d, Detail{Field: at, Reason: "must be one of " + strings.Join(known, ", ")})
		case slices.Index(list, s) < i:
			d = append(d, Detail{Field: at, Reason: fmt.Sprintf("repeats %s", s)})
		}
	}
	return d
}

// DeliveryEvent is one thing that happened to a push on one device, as it
// waits in its app's queue to be sent in a push.events message. ID is the
// queue's: it orders the app's events and names the event.
type DeliveryEvent struct {
	ID             int64
	AppID          string
	Type           WebhookEvent
	PushID         string
	RequestGroupID string
	UserID         string
	DeviceID       string
	TokenSuffix    string
	Reason         string
	// At is when it happened (a device's report: the time it gives);
	// QueuedAt when it was queued, from which its batch's age counts.
	At, QueuedAt time.Time
}

// EventsDue reports whether a batch goes out at now: MaxEventsPerMessage
// are waiting (full), or the oldest was queued EventsBatchAge ago.
func EventsDue(oldest time.Time, full bool, now time.Time) bool {
	return full || !oldest.IsZero() && !now.Before(oldest.Add(EventsBatchAge))
}

// EventID is the id of the event: stable across every retry of it.
func (e DeliveryEvent) EventID() string { return "evt_" + strconv.FormatInt(e.ID, 10) }

// EventsMessageID is the webhook-id of a push.events message carrying the
// events: a digest of their ids, so that the same batch sent again has
// the same id and any other batch another.
func EventsMessageID(appID string, events []DeliveryEvent) string {
	h := sha256.New()
	h.Write([]byte(appID))
	for _, e := range events {
		h.Write(strconv.AppendInt([]byte{','}, e.ID, 10))
	}
	return "msg_" + appID + "_events_" + hex.EncodeToString(h.Sum(nil)[:12])
}

// EventStream is where an app's queue of delivery events stands, as a
// dispatcher that holds it sees it: the failed messages in a row, and
// when the next may be tried.
type EventStream struct {
	Failures int
	RetryAt  time.Time
}

// EventStreamStore keeps each app's queue of delivery events (written by
// the writes that record the outcomes and device reports they tell of)
// and the lease that makes one dispatcher, across nodes, send each app's.
type EventStreamStore interface {
	// StreamApps returns the apps that may have delivery events queued:
	// those that set their webhookEvents.
	StreamApps(ctx context.Context) ([]string, error)
	// ClaimStream takes the app's stream for holder until until when no
	// other holder has it at now (its lease ended), or renews holder's;
	// false when another holds it.
	ClaimStream(ctx context.Context, appID, holder string, now, until time.Time) (EventStream, bool, error)
	// QueueHead tells whether the app's queue holds a batch due at now
	// (see EventsDue) without reading the batch: the oldest event's time
	// queued, and whether MaxEventsPerMessage are waiting (read only when
	// the oldest is not due yet).
	QueueHead(ctx context.Context, appID string, now time.Time) (bool, error)
	// QueuedEvents returns the app's first limit events, in order.
	QueuedEvents(ctx context.Context, appID string, limit int) ([]DeliveryEvent, error)
	// SentEvents removes the events (sent) and clears the stream's
	// failures, while holder holds it.
	SentEvents(ctx context.Context, appID, holder string, ids []int64) error
	// StreamFailed counts a failed message and sets when the next may be
	// tried, while holder holds the stream.
	StreamFailed(ctx context.Context, appID, holder string, retryAt time.Time) error
}
