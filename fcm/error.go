package fcm

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald"
)

// quotaWait is how long to wait after a 429 without Retry-After, as FCM asks.
const quotaWait = 60 * time.Second

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

// classify turns a non-2xx FCM answer into a send error. It is pure: now is
// only used to turn an HTTP-date Retry-After into a duration.
func classify(status int, retryAfter string, body []byte, now time.Time) *herald.SendError {
	var g googleError
	_ = json.Unmarshal(body, &g) // a body that is not Google's leaves g empty
	e := &herald.SendError{Status: status, Code: g.errorCode(), Message: g.Error.Message}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	e.Class = classOf(status, e.Code, g)
	if e.Class == herald.SendRetry {
		e.RetryAfter = parseRetryAfter(retryAfter, now)
		if e.RetryAfter == 0 && (status == http.StatusTooManyRequests || e.Code == "QUOTA_EXCEEDED") {
			e.RetryAfter = quotaWait
		}
	}
	return e
}

// classOf decides the class of a failed send from its status and error code.
func classOf(status int, code string, g googleError) herald.SendClass {
	switch {
	case code == "UNREGISTERED":
		// Only FCM's own verdict deletes a token: a bare 404 (a wrong
		// project or endpoint) must not wipe an app's tokens.
		return herald.SendUnregistered
	case code == "SENDER_ID_MISMATCH":
		return herald.SendInvalidToken
	case code == "THIRD_PARTY_AUTH_ERROR" || code == "APNS_AUTH_ERROR":
		// Answered with 401 too, but about APNs or web push, not our token.
		// APNS_AUTH_ERROR is its legacy name, still answered by FCM.
		return herald.SendThirdPartyAuth
	case code == "UNAUTHENTICATED" || status == http.StatusUnauthorized:
		// FCM refused the access token (revoked, or stale after a restart
		// of FCM's front end): Send tries once more with a fresh one (see
		// unauthenticated), so only a refused fresh token reaches delivery.
		return herald.SendAuth
	case code == "PERMISSION_DENIED":
		// The project refuses this service account (API disabled, role
		// missing): no token of the app can be sent, like an auth failure.
		return herald.SendAuth
	case code == "QUOTA_EXCEEDED" || code == "UNAVAILABLE" || code == "INTERNAL":
		return herald.SendRetry
	case status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500:
		return herald.SendRetry
	case code == "INVALID_ARGUMENT" && g.aboutToken():
		return herald.SendInvalidToken
	}
	return herald.SendRejected
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

// unauthenticated returns the send error of an access token FCM refused,
// which a fresh token may mend; nil for any other error.
func unauthenticated(err error) *herald.SendError {
	se, ok := err.(*herald.SendError)
	if !ok || se.Class != herald.SendAuth || se.Code != "UNAUTHENTICATED" && se.Status != http.StatusUnauthorized {
		return nil
	}
	return se
}
