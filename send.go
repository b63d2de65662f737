package herald

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Notification is one message to one token.
type Notification struct {
	Token    string
	PushID   string
	Title    string
	Body     string
	ImageURL string
	LinkURL  string
	Badge    bool
	// RequestGroupID is the push's requestGroupId; the push service may
	// label the message with it for its own reports.
	RequestGroupID string
	// Tag is the same on every send of one message and differs between
	// messages: the push id, and on a push with a message per recipient
	// that message's index. The push service shows a message sent twice to
	// a device (a resend after a crash) once, the later replacing the first.
	Tag string
	// HasTTL says the message has a time to live: TTL seconds from its
	// send (0: deliver now or never), ending at Expires (unix seconds).
	// Without one the push service keeps it its default time.
	HasTTL  bool
	TTL     int
	Expires int64
	// High marks a high-priority push's message (PriorityHigh): the push
	// service is asked to wake the device for it at once.
	High bool
	// ValidateOnly has the push service check the message without
	// delivering it (FCM's validate_only): the sends of a sandbox app.
	ValidateOnly bool
}

// AppSender sends one app's notifications with the app's credentials (the
// FCM client, its service account loaded once). Errors are *SendError.
type AppSender interface {
	// Authorize makes sure an access token is at hand: SendAuth when the
	// credentials are refused, SendRetry when the token endpoint cannot be
	// reached.
	Authorize(ctx context.Context) error
	// Deliver sends one notification.
	Deliver(ctx context.Context, n Notification) error
}

// SendClass says what a failed send means for the token and the push.
type SendClass string

// The classes of failed sends.
const (
	// SendUnregistered: the token is gone (the app was uninstalled).
	SendUnregistered SendClass = "unregistered"
	// SendInvalidToken: the token is malformed or belongs to another sender.
	SendInvalidToken SendClass = "invalid_token"
	// SendRetry: a passing failure (quota, outage, network); try again.
	SendRetry SendClass = "retry"
	// SendAuth: the app's credentials are refused; no token of the app can
	// be sent, so the push fails.
	SendAuth SendClass = "auth"
	// SendThirdPartyAuth: the project's APNs or web-push credentials were
	// refused; this delivery fails, the push goes on.
	SendThirdPartyAuth SendClass = "third_party_auth"
	// SendRejected: this message was refused.
	SendRejected SendClass = "rejected"
)

// SendError is a failed send, classified: the one error type of the send
// path, which the FCM client returns and delivery maps to outcomes.
type SendError struct {
	Class SendClass
	// Status is the HTTP status of the push service's (or its token
	// endpoint's) answer, 0 when none arrived.
	Status int
	// Code is the push service's error code (FCM's errorCode such as
	// UNREGISTERED, else the error status, else the OAuth2 error).
	Code    string
	Message string
	// RetryAfter is the wait the push service asked for (SendRetry).
	RetryAfter time.Duration
	// Err is the underlying error of network and token failures.
	Err error
}

// Error says what failed: the class, status and code, and the message.
func (e *SendError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "send failed (%s", e.Class)
	if e.Status != 0 {
		fmt.Fprintf(&b, ", status %d", e.Status)
	}
	if e.Code != "" {
		fmt.Fprintf(&b, ", %s", e.Code)
	}
	b.WriteString(")")
	switch {
	case e.Message != "":
		b.WriteString(": " + e.Message)
	case e.Err != nil:
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *SendError) Unwrap() error { return e.Err }

// ErrNoRetry marks a failure that retrying cannot mend (a webhook URL that
// is no longer allowed, say).
var ErrNoRetry = errors.New("will not be retried")

// UndeliverableReport is one webhook message listing users a push could not
// reach. Its ID and time are fixed when it is made, so every retry sends
// the same message.
type UndeliverableReport struct {
	ID             string        `json:"id"`
	At             time.Time     `json:"at"`
	AppID          string        `json:"appId"`
	PushID         string        `json:"pushId"`
	RequestGroupID string        `json:"requestGroupId"`
	Users          []Unreachable `json:"users"`
}

// MaxUsersPerReport bounds the users listed in one webhook message.
const MaxUsersPerReport = 1000

// webhookRetryDelays is DESIGN.md's schedule for a failed webhook message.
var webhookRetryDelays = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour}

// WebhookRetry is the one retry policy of webhook messages, the
// push.undeliverable reports and the consent.changed events alike: after
// failed attempt number attempt (1-based) ended by err, how long to wait
// and whether to try again. A message is given up after WebhookAttempts
// attempts, or at once when err wraps ErrNoRetry. The wait follows the
// schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h) and stays at its last step
// past the end, for a caller asked for a time all the same.
func WebhookRetry(attempt int, err error) (time.Duration, bool) {
	step := min(max(attempt, 1), len(webhookRetryDelays)) - 1
	retry := attempt >= 1 && attempt < WebhookAttempts && !errors.Is(err, ErrNoRetry)
	return webhookRetryDelays[step], retry
}

// WebhookAttempts is the first attempt and its retries.
const WebhookAttempts = 7
