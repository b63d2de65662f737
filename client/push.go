package client

import (
	"context"
	"encoding/json"
	"net/http"
)

// PushUsersRequest is the body of POST /api/push/v2/users: the same message
// to every push token of each listed user (at most 500 user IDs).
type PushUsersRequest struct {
	UserIDs  []any  `json:"userIds"` // strings or numbers
	Title    string `json:"title"`
	Content  string `json:"content"`
	LinkURL  string `json:"linkURL,omitempty"`
	ImageURL string `json:"imageURL,omitempty"`
	// Localized are the title and content for devices of a language
	// (DESIGN 13), keyed by BCP 47 tag: a device gets the entry of its
	// locale, then of its language, then Title and Content.
	Localized map[string]Text `json:"localized,omitempty"`
	Options   *Options        `json:"options,omitempty"`
}

// Text is a localized title and content.
type Text struct {
	Title   string `json:"title"`
	Content string `json:"content"`
}

// PushMessagesRequest is the body of POST /api/push/v2/messages: one
// message per user (at most 200 messages, 150 KB).
type PushMessagesRequest struct {
	Messages []Message `json:"messages"`
	Options  *Options  `json:"options,omitempty"` // ScheduleTime is refused here
}

// PushAllRequest is the body of POST /api/push/v2/all: one message to
// every device of the app, found when the push is sent.
type PushAllRequest struct {
	Title     string          `json:"title"`
	Content   string          `json:"content"`
	LinkURL   string          `json:"linkURL,omitempty"`
	ImageURL  string          `json:"imageURL,omitempty"`
	Localized map[string]Text `json:"localized,omitempty"`
	Options   *Options        `json:"options,omitempty"`
}

// PushSegmentRequest is the body of POST /api/push/v2/segments: one
// message to the devices a filter selects when the push is sent, the
// filter given (Filter, a JSON tree of DESIGN 13) or saved (SegmentID).
type PushSegmentRequest struct {
	Filter    json.RawMessage `json:"filter,omitempty"`
	SegmentID string          `json:"segmentId,omitempty"`
	Title     string          `json:"title"`
	Content   string          `json:"content"`
	LinkURL   string          `json:"linkURL,omitempty"`
	ImageURL  string          `json:"imageURL,omitempty"`
	Localized map[string]Text `json:"localized,omitempty"`
	Options   *Options        `json:"options,omitempty"`
}

// Message is one element of PushMessagesRequest.Messages.
type Message struct {
	UserID   any    `json:"userId"` // string or number
	Title    string `json:"title"`
	Content  string `json:"content"`
	LinkURL  string `json:"linkURL,omitempty"`
	ImageURL string `json:"imageURL,omitempty"`
}

// Options are the push options of spec section 2.5, plus Herald's
// isMarketing extension.
type Options struct {
	IsUsingBadge   *bool  `json:"isUsingBadge,omitempty"`
	RequestGroupID string `json:"requestGroupId,omitempty"`
	ScheduleTime   string `json:"scheduleTime,omitempty"` // "YYYY-MM-DDTHH:MM" in the app's time zone
	IsMarketing    *bool  `json:"isMarketing,omitempty"`
	// NightPolicy is "skip" (the default) or "defer": a marketing push
	// sent at night goes to devices without night consent at 08:00.
	NightPolicy string `json:"nightPolicy,omitempty"`
	// TTL is how long FCM keeps each message for an offline device, in
	// seconds from its send (0–2,419,200); nil leaves FCM's default.
	TTL *int `json:"ttl,omitempty"`
	// Priority is "normal" (the default) or "high": a one-time code and
	// the like, sent ahead of the project's normal pushes (never
	// marketing).
	Priority string `json:"priority,omitempty"`
	// LocalTime, with ScheduleTime, sends each device when its own time
	// zone's clock reads ScheduleTime (the app's zone for a device that
	// reported none).
	LocalTime bool `json:"localTime,omitempty"`
	// SpreadMinutes spreads the push's sends evenly over that many
	// minutes (1–1440) from its start; 0 sends them as fast as the rates
	// allow. Not on PushMessages.
	SpreadMinutes int `json:"spreadMinutes,omitempty"`
}

// PushResult is the answer to an accepted push.
type PushResult struct {
	// Message is the JSON string body, e.g. "Push has been requested to be sent."
	Message string
	// PushID is the X-Push-Id header naming the push's history record.
	PushID string
}

// PushUsers sends one message to several users (POST /api/push/v2/users).
func (c *Client) PushUsers(ctx context.Context, req PushUsersRequest) (PushResult, error) {
	return c.push(ctx, "/api/push/v2/users", req)
}

// PushMessages sends a message per user (POST /api/push/v2/messages).
func (c *Client) PushMessages(ctx context.Context, req PushMessagesRequest) (PushResult, error) {
	return c.push(ctx, "/api/push/v2/messages", req)
}

// PushAll sends one message to every device of the app (POST
// /api/push/v2/all).
func (c *Client) PushAll(ctx context.Context, req PushAllRequest) (PushResult, error) {
	return c.push(ctx, "/api/push/v2/all", req)
}

// PushSegment sends one message to the devices a filter or saved segment
// selects (POST /api/push/v2/segments).
func (c *Client) PushSegment(ctx context.Context, req PushSegmentRequest) (PushResult, error) {
	return c.push(ctx, "/api/push/v2/segments", req)
}

// push posts a push request and reads the string body and push id.
func (c *Client) push(ctx context.Context, path string, req any) (PushResult, error) {
	var msg string
	h, err := c.do(ctx, http.MethodPost, path, serverAuth, req, &msg)
	if err != nil {
		return PushResult{}, err
	}
	return PushResult{Message: msg, PushID: h.Get("X-Push-Id")}, nil
}
