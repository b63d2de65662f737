package client

import (
	"context"
	"net/http"
)

// Event is one thing a device reports about a push (its id is in the
// message's data.pushId): Type "received" or "opened", At an RFC 3339
// time ("" for now).
type Event struct {
	PushID string `json:"pushId"`
	Type   string `json:"type"`
	At     string `json:"at,omitempty"`
}

// EventsResult is the answer to a report: how many events counted and how
// many were ignored (repeats, pushes not sent to the device, times out of
// range).
type EventsResult struct {
	Accepted int `json:"accepted"`
	Ignored  int `json:"ignored"`
}

// ReportEvents reports what a device did with pushes (POST
// /api/sdk/v2/events): 1 to 100 events.
func (c *Client) ReportEvents(ctx context.Context, deviceID string, events []Event) (EventsResult, error) {
	body := struct {
		DeviceID string  `json:"deviceId"`
		Events   []Event `json:"events"`
	}{deviceID, events}
	var out EventsResult
	_, err := c.do(ctx, http.MethodPost, "/api/sdk/v2/events", sdkAuth, body, &out)
	return out, err
}
