package delivery

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

// TestOutcomeOf maps every answer to a send to its outcome: the table of
// DESIGN §6 (FCM errors), with the 270-day rule that tells an expired
// token from an uninstalled app.
func TestOutcomeOf(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	fresh := now.Add(-herald.TokenExpiryAge + time.Hour)
	old := now.Add(-herald.TokenExpiryAge - time.Hour)
	sendErr := func(class herald.SendClass, code string, retryAfter time.Duration) error {
		return &herald.SendError{Class: class, Code: code, RetryAfter: retryAfter, Message: "m"}
	}
	tests := []struct {
		name     string
		err      error
		cut      bool
		updated  time.Time
		attempts int
		giveUp   bool
		want     outcome
		minRetry time.Duration // RetryIn at least, for retries (jittered)
	}{
		{name: "Sent", want: outcome{State: herald.DeliverySent}},
		{name: "UnregisteredRecentToken", err: sendErr(herald.SendUnregistered, "UNREGISTERED", 0), updated: fresh,
			want: outcome{State: herald.DeliveryUndeliverable, Reason: herald.ReasonAppDeleted, Drop: true}},
		{name: "UnregisteredTokenOver270Days", err: sendErr(herald.SendUnregistered, "UNREGISTERED", 0), updated: old,
			want: outcome{State: herald.DeliveryUndeliverable, Reason: herald.ReasonTokenExpired, Drop: true}},
		{name: "InvalidArgumentAboutToken", err: sendErr(herald.SendInvalidToken, "INVALID_ARGUMENT", 0), updated: fresh,
			want: outcome{State: herald.DeliveryUndeliverable, Reason: herald.ReasonTokenExpired, Drop: true}},
		{name: "SenderIDMismatch", err: sendErr(herald.SendInvalidToken, "SENDER_ID_MISMATCH", 0), updated: fresh,
			want: outcome{State: herald.DeliveryUndeliverable, Reason: herald.ReasonTokenExpired, Drop: true}},
		{name: "QuotaExceededWithRetryAfter", err: sendErr(herald.SendRetry, "QUOTA_EXCEEDED", 60*time.Second),
			want: outcome{State: herald.DeliveryRetry}, minRetry: 60 * time.Second},
		{name: "Unavailable", err: sendErr(herald.SendRetry, "UNAVAILABLE", 0), attempts: 3,
			want: outcome{State: herald.DeliveryRetry}, minRetry: 6 * time.Second}, // 4th attempt: 8 s ±25 %
		{name: "Internal", err: sendErr(herald.SendRetry, "INTERNAL", 0),
			want: outcome{State: herald.DeliveryRetry}, minRetry: 750 * time.Millisecond},
		{name: "NetworkError", err: errors.New("connection reset"),
			want: outcome{State: herald.DeliveryRetry}, minRetry: 750 * time.Millisecond},
		{name: "RetryPastDeadline", err: sendErr(herald.SendRetry, "UNAVAILABLE", 0), giveUp: true,
			want: outcome{State: herald.DeliveryFailed, GaveUp: true}},
		{name: "CutOff", err: context.Canceled, cut: true, want: outcome{State: herald.DeliveryRetry, CutOff: true}},
		{name: "CredentialsRefused", err: sendErr(herald.SendAuth, "UNAUTHENTICATED", 0),
			want: outcome{State: herald.DeliveryFailed, AuthFailure: true}},
		{name: "ThirdPartyAuth", err: sendErr(herald.SendThirdPartyAuth, "THIRD_PARTY_AUTH_ERROR", 0),
			want: outcome{State: herald.DeliveryFailed, ThirdParty: true}},
		{name: "MessageRejected", err: sendErr(herald.SendRejected, "INVALID_ARGUMENT", 0),
			want: outcome{State: herald.DeliveryFailed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newChunk(nil, &blockingSender{}, 4)
			c.s.cfg.Now = func() time.Time { return now }
			c.giveUp = tt.giveUp
			got := c.outcomeOf(tt.err, tt.cut, herald.Delivery{TokenUpdatedAt: tt.updated, Attempts: tt.attempts})
			if tt.err != nil && (got.Error == "" || !strings.Contains(got.Error, tt.err.Error())) {
				t.Errorf("error: got %q, want it to hold %q", got.Error, tt.err.Error())
			}
			if got.RetryIn < tt.minRetry || tt.minRetry == 0 && got.RetryIn != 0 {
				t.Errorf("retry in: got %v, want at least %v", got.RetryIn, tt.minRetry)
			}
			got.Error, got.RetryIn = "", 0
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
