package client

import (
	"context"
	"net/http"
)

// MarketingState is the consent change of PATCH /api/app-user/v2/marketing
// (spec 2.2): set only the flags to change.
type MarketingState struct {
	Marketing      *bool `json:"marketing,omitempty"`
	MarketingNight *bool `json:"marketingNight,omitempty"`
}

// Consent is a user's marketing consent after a change.
type Consent struct {
	Marketing      bool `json:"marketing"`
	MarketingNight bool `json:"marketingNight"`
}

// SetMarketing changes the marketing consent of userID (a string or number)
// on every device mapped to it and returns the new pair.
func (c *Client) SetMarketing(ctx context.Context, userID any, state MarketingState) (Consent, error) {
	body := struct {
		UserID any            `json:"userId"`
		State  MarketingState `json:"state"`
	}{userID, state}
	var out Consent
	_, err := c.do(ctx, http.MethodPatch, "/api/app-user/v2/marketing", serverAuth, body, &out)
	return out, err
}

// DeleteUser withdraws userID (a string or number): its token mappings and
// settings are removed. It returns the answer's message.
func (c *Client) DeleteUser(ctx context.Context, userID any) (string, error) {
	body := struct {
		UserID any `json:"userId"`
	}{userID}
	var out struct {
		Message string `json:"message"`
	}
	_, err := c.do(ctx, http.MethodDelete, "/api/app-user/v2", serverAuth, body, &out)
	return out.Message, err
}
