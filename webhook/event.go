package webhook

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/heraldpush/herald"
)

// EventUndeliverable is the type of the event listing users a push could
// not reach.
const EventUndeliverable = "push.undeliverable"

// Event is the JSON body of a webhook message.
type Event struct {
	Type      string        `json:"type"`
	Timestamp string        `json:"timestamp"` // RFC 3339
	Data      Undeliverable `json:"data"`
}

// Undeliverable is the data of a push.undeliverable event: one batch of the
// users a push could not reach. RequestGroupID is null for a push without
// one.
type Undeliverable struct {
	AppID          string               `json:"appId"`
	PushID         string               `json:"pushId"`
	RequestGroupID *string              `json:"requestGroupId"`
	Users          []herald.Unreachable `json:"users"`
}

// Body returns the JSON body of a report. The same report always gives the
// same bytes, so a retried message is the message first sent.
func Body(r herald.UndeliverableReport) ([]byte, error) {
	var group *string
	if r.RequestGroupID != "" {
		group = &r.RequestGroupID
	}
	return json.Marshal(Event{
		Type:      EventUndeliverable,
		Timestamp: r.At.UTC().Format(time.RFC3339),
		Data:      Undeliverable{AppID: r.AppID, PushID: r.PushID, RequestGroupID: group, Users: r.Users},
	})
}

// ConsentChanged is the data of a consent.changed event: the user's new
// pair, who set it and when. It is sent for every decision about the
// user's consent, a re-confirmation (the same pair set again) and a
// withdrawal included, so the app can send the notice the law asks for.
// A decision made on one device (source sdk) carries that device's pair.
type ConsentChanged struct {
	AppID          string               `json:"appId"`
	UserID         string               `json:"userId"`
	Marketing      bool                 `json:"marketing"`
	MarketingNight bool                 `json:"marketingNight"`
	Source         herald.ConsentSource `json:"source"`
	ChangedAt      time.Time            `json:"changedAt"`
}

// consentEvent is the JSON body of a consent.changed message.
type consentEvent struct {
	Type      string         `json:"type"`
	Timestamp string         `json:"timestamp"` // RFC 3339
	Data      ConsentChanged `json:"data"`
}

// ConsentBody returns the JSON body of the consent.changed event of a
// record (one with a user). The same record always gives the same bytes.
func ConsentBody(r herald.ConsentRecord) ([]byte, error) {
	if r.UserID == nil {
		return nil, fmt.Errorf("webhook: consent record %d has no user", r.ID)
	}
	at := r.At.UTC()
	return json.Marshal(consentEvent{
		Type:      herald.EventConsentChanged,
		Timestamp: at.Format(time.RFC3339),
		Data: ConsentChanged{AppID: r.AppID, UserID: *r.UserID, Marketing: r.To.Marketing, MarketingNight: r.To.MarketingNight,
			Source: r.Source, ChangedAt: at},
	})
}

// eventsMessage is the JSON body of a push.events message.
type eventsMessage struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"` // RFC 3339
	Data      struct {
		Events []deliveryEvent `json:"events"`
	} `json:"data"`
}

// deliveryEvent is one event of a push.events message.
type deliveryEvent struct {
	ID        string            `json:"id"`
	Type      string            `json:"type"`
	Timestamp string            `json:"timestamp"` // RFC 3339, to the millisecond
	Data      deliveryEventData `json:"data"`
}

// deliveryEventData is what an event tells of: a push on one device.
// RequestGroupID and UserID are null for a push without a group and a
// device without a user; Reason is a failure's only.
type deliveryEventData struct {
	AppID          string  `json:"appId"`
	PushID         string  `json:"pushId"`
	RequestGroupID *string `json:"requestGroupId"`
	UserID         *string `json:"userId"`
	DeviceID       string  `json:"deviceId"`
	TokenSuffix    string  `json:"tokenSuffix"`
	Reason         string  `json:"reason,omitempty"`
}

// EventsBody returns the JSON body of a push.events message carrying
// events (in order), stamped with the time the last was queued: the same
// events always give the same bytes, so a retried message is the message
// first sent.
func EventsBody(events []herald.DeliveryEvent) ([]byte, error) {
	var m eventsMessage
	m.Type = herald.WebhookEventsBatch
	m.Data.Events = make([]deliveryEvent, len(events))
	var last time.Time
	for i, e := range events {
		d := deliveryEventData{AppID: e.AppID, PushID: e.PushID, RequestGroupID: orNull(e.RequestGroupID),
			UserID: orNull(e.UserID), DeviceID: e.DeviceID, TokenSuffix: e.TokenSuffix, Reason: e.Reason}
		m.Data.Events[i] = deliveryEvent{ID: e.EventID(), Type: string(e.Type),
			Timestamp: e.At.UTC().Format("2006-01-02T15:04:05.000Z07:00"), Data: d}
		if e.QueuedAt.After(last) {
			last = e.QueuedAt
		}
	}
	m.Timestamp = last.UTC().Format(time.RFC3339)
	return json.Marshal(m)
}

// orNull is s, or null when it is empty.
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ApprovalRequested is the data of a push.approval_requested event: a
// push waits for an operator's approval (DESIGN 14) until ExpiresAt.
// RequestGroupID is null for a push without one, ComposedBy for a push
// the Server API made, Users for a push to all users, a topic or a
// segment (counted as it fans out).
type ApprovalRequested struct {
	AppID          string          `json:"appId"`
	PushID         string          `json:"pushId"`
	RequestGroupID *string         `json:"requestGroupId"`
	Kind           herald.PushKind `json:"kind"`
	Users          *int            `json:"users"`
	ComposedBy     *string         `json:"composedBy"`
	RequestedAt    time.Time       `json:"requestedAt"`
	ExpiresAt      time.Time       `json:"expiresAt"`
}

// approvalEvent is the JSON body of a push.approval_requested message.
type approvalEvent struct {
	Type      string            `json:"type"`
	Timestamp string            `json:"timestamp"` // RFC 3339
	Data      ApprovalRequested `json:"data"`
}

// ApprovalBody returns the JSON body of a push's push.approval_requested
// event. The same request always gives the same bytes.
func ApprovalBody(r herald.ApprovalRequest) ([]byte, error) {
	return json.Marshal(approvalEvent{
		Type:      herald.EventApprovalRequested,
		Timestamp: r.RequestedAt.UTC().Format(time.RFC3339),
		Data: ApprovalRequested{AppID: r.AppID, PushID: r.PushID, RequestGroupID: orNull(r.RequestGroupID), Kind: r.Kind, Users: r.Users,
			ComposedBy: orNull(r.ComposedBy), RequestedAt: r.RequestedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC()},
	})
}
