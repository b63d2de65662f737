package client

import (
	"context"
	"net/http"
)

// RegisterRequest is the body of POST /api/sdk/v2/push-token.
type RegisterRequest struct {
	DeviceID         string `json:"deviceId"`
	Token            string `json:"token"`
	Platform         string `json:"platform"` // android, ios or web
	AppSourceVersion string `json:"appSourceVersion"`
	UserID           any    `json:"userId,omitempty"`   // string or number; nil leaves the device unmapped
	Locale           string `json:"locale,omitempty"`   // BCP 47, e.g. ko-KR
	TimeZone         string `json:"timeZone,omitempty"` // IANA name, e.g. Asia/Seoul
}

// Device is the SDK API's view of a device after a change.
type Device struct {
	DeviceID       string  `json:"deviceId"`
	UserID         *string `json:"userId"` // nil when no user is mapped
	Marketing      bool    `json:"marketing"`
	MarketingNight bool    `json:"marketingNight"`
}

// DeviceConsent is a device's consent pair after SetConsent.
type DeviceConsent struct {
	DeviceID       string `json:"deviceId"`
	Marketing      bool   `json:"marketing"`
	MarketingNight bool   `json:"marketingNight"`
}

// RegisterPushToken registers or refreshes a device's push token, as the
// SDK's registerPushToken() does (POST /api/sdk/v2/push-token).
func (c *Client) RegisterPushToken(ctx context.Context, req RegisterRequest) (Device, error) {
	var out Device
	_, err := c.do(ctx, http.MethodPost, "/api/sdk/v2/push-token", sdkAuth, req, &out)
	return out, err
}

// SetUserID maps deviceID to userID (a string or number), as the SDK's
// setUserId() does (POST /api/sdk/v2/user); a nil userID unmaps the device.
func (c *Client) SetUserID(ctx context.Context, deviceID string, userID any) (Device, error) {
	body := struct {
		DeviceID string `json:"deviceId"`
		UserID   any    `json:"userId"` // nil is sent as null
	}{deviceID, userID}
	var out Device
	_, err := c.do(ctx, http.MethodPost, "/api/sdk/v2/user", sdkAuth, body, &out)
	return out, err
}

// SetConsent changes a device's own consent flags, as the in-app consent
// switch does (PATCH /api/sdk/v2/consent); nil flags are left unchanged.
func (c *Client) SetConsent(ctx context.Context, deviceID string, marketing, marketingNight *bool) (DeviceConsent, error) {
	body := struct {
		DeviceID       string `json:"deviceId"`
		Marketing      *bool  `json:"marketing,omitempty"`
		MarketingNight *bool  `json:"marketingNight,omitempty"`
	}{deviceID, marketing, marketingNight}
	var out DeviceConsent
	_, err := c.do(ctx, http.MethodPatch, "/api/sdk/v2/consent", sdkAuth, body, &out)
	return out, err
}

// DeletePushToken removes a device's push token (DELETE
// /api/sdk/v2/push-token).
func (c *Client) DeletePushToken(ctx context.Context, deviceID string) error {
	body := struct {
		DeviceID string `json:"deviceId"`
	}{deviceID}
	_, err := c.do(ctx, http.MethodDelete, "/api/sdk/v2/push-token", sdkAuth, body, nil)
	return err
}
