package webhook

import (
	"encoding/json"
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
