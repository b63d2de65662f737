package fcm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Class tells delivery what to do about a failed send.
type Class string

// The classes of a failed send.
const (
	// ClassUnregistered: the token is no longer registered; delete it.
	ClassUnregistered Class = "unregistered"
	// ClassInvalidToken: FCM rejected the token itself; delete it.
	ClassInvalidToken Class = "invalid_token"
	// ClassSenderMismatch: the token belongs to another sender; delete it.
	ClassSenderMismatch Class = "sender_mismatch"
	// ClassRetry: a transient failure; retry with backoff, waiting at least
	// RetryAfter.
	ClassRetry Class = "retry"
	// ClassAuth: the app's credentials do not work (the token endpoint or
	// FCM refused them, even with a fresh access token); the whole push
	// fails.
	ClassAuth Class = "auth"
	// ClassUnauthenticated: FCM refused the access token (revoked, or stale
	// after a restart of FCM's front end). Send fetches a fresh one and
	// tries again once, so callers only see it turned into ClassAuth.
	ClassUnauthenticated Class = "unauthenticated"
	// ClassThirdPartyAuth: FCM could not pass the message on because the
	// project's APNs or web-push credentials were refused. Only this
	// delivery fails; other platforms may still work.
	ClassThirdPartyAuth Class = "third_party_auth"
	// ClassInvalidMessage: FCM rejected the message; retrying will not help.
	ClassInvalidMessage Class = "invalid_message"
)

// quotaWait is how long to wait after a 429 without Retry-After, as FCM asks.
const quotaWait = 60 * time.Second

// SendError is the error Send returns for every failure.
type SendError struct {
	Class Class
	// Status is the HTTP status of FCM's (or the token endpoint's) answer,
	// 0 when none arrived.
	Status int
	// ErrorCode is FCM's errorCode (e.g. UNREGISTERED), else the error
	// status (e.g. UNAUTHENTICATED), else the OAuth2 error.
	ErrorCode  string
	Message    string
	RetryAfter time.Duration
	// Err is the underlying error for network and token failures.
	Err error
}

// Error implements error.
func (e *SendError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fcm: send failed (%s", e.Class)
	if e.Status != 0 {
		fmt.Fprintf(&b, ", status %d", e.Status)
	}
	if e.ErrorCode != "" {
		fmt.Fprintf(&b, ", %s", e.ErrorCode)
	}
	b.WriteString(")")
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// Unwrap returns the underlying error, if any.
func (e *SendError) Unwrap() error { return e.Err }

const (
	fcmErrorType        = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
	badRequestErrorType = "type.googleapis.com/google.rpc.BadRequest"
)

// googleError is the error body of Google APIs.
type googleError struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
		Details []struct {
			Type            string `json:"@type"`
			ErrorCode       string `json:"errorCode"`
			FieldViolations []struct {
				Field       string `json:"field"`
				Description string `json:"description"`
			} `json:"fieldViolations"`
		} `json:"details"`
	} `json:"error"`
}

// errorCode returns FCM's errorCode, falling back to the error status.
func (g googleError) errorCode() string {
	for _, d := range g.Error.Details {
		if d.Type == fcmErrorType && d.ErrorCode != "" {
			return d.ErrorCode
		}
	}
	return g.Error.Status
}

// aboutToken reports whether an INVALID_ARGUMENT concerns the registration token.
func (g googleError) aboutToken() bool {
	if strings.Contains(strings.ToLower(g.Error.Message), "registration token") {
		return true
	}
	for _, d := range g.Error.Details {
		for _, v := range d.FieldViolations {
			if v.Field == "message.token" {
				return true
			}
		}
	}
	return false
}

// classify turns a non-2xx FCM answer into a SendError. It is pure: now is
// only used to turn an HTTP-date Retry-After into a duration.
func classify(status int, retryAfter string, body []byte, now time.Time) *SendError {
	var g googleError
	_ = json.Unmarshal(body, &g) // a body that is not Google's leaves g empty
	e := &SendError{Status: status, ErrorCode: g.errorCode(), Message: g.Error.Message}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	e.Class = classOf(status, e.ErrorCode, g)
	if e.Class == ClassRetry {
		e.RetryAfter = parseRetryAfter(retryAfter, now)
		if e.RetryAfter == 0 && (status == http.StatusTooManyRequests || e.ErrorCode == "QUOTA_EXCEEDED") {
			e.RetryAfter = quotaWait
		}
	}
	return e
}

// classOf decides the class of a failed send from its status and error code.
func classOf(status int, code string, g googleError) Class {
	switch {
	case code == "UNREGISTERED":
		// Only FCM's own verdict deletes a token: a bare 404 (a wrong
		// project or endpoint) must not wipe an app's tokens.
		return ClassUnregistered
	case code == "SENDER_ID_MISMATCH":
		return ClassSenderMismatch
	case code == "THIRD_PARTY_AUTH_ERROR":
		// Answered with 401 too, but about APNs or web push, not our token.
		return ClassThirdPartyAuth
	case code == "UNAUTHENTICATED" || status == http.StatusUnauthorized:
		return ClassUnauthenticated
	case code == "PERMISSION_DENIED":
		// The project refuses this service account (API disabled, role
		// missing): no token of the app can be sent, like an auth failure.
		return ClassAuth
	case code == "QUOTA_EXCEEDED" || code == "UNAVAILABLE" || code == "INTERNAL":
		return ClassRetry
	case status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500:
		return ClassRetry
	case code == "INVALID_ARGUMENT" && g.aboutToken():
		return ClassInvalidToken
	}
	return ClassInvalidMessage
}

// parseRetryAfter reads a Retry-After value in seconds or as an HTTP-date;
// it returns 0 when the value is absent, malformed or in the past.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(min(secs, int64(24*time.Hour/time.Second))) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil || !t.After(now) {
		return 0
	}
	return t.Sub(now)
}
