package herald

import (
	"errors"
	"testing"
	"time"
)

func TestWebhookRetryDelay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		attempt int
		want    time.Duration
		ok      bool
	}{
		{-1, 0, false}, {0, 0, false},
		{1, 5 * time.Second, true}, {2, 5 * time.Minute, true}, {3, 30 * time.Minute, true},
		{4, 2 * time.Hour, true}, {5, 5 * time.Hour, true}, {6, 10 * time.Hour, true},
		{7, 0, false}, {100, 0, false},
	}
	for _, tt := range tests {
		got, ok := WebhookRetryDelay(tt.attempt)
		if got != tt.want || ok != tt.ok {
			t.Errorf("WebhookRetryDelay(%d): got (%v, %v), want (%v, %v)", tt.attempt, got, ok, tt.want, tt.ok)
		}
	}
	if WebhookAttempts != len(webhookRetryDelays)+1 {
		t.Errorf("WebhookAttempts: got %d, want the first attempt and %d retries", WebhookAttempts, len(webhookRetryDelays))
	}
}

func TestSendErrorMessage(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err  *SendError
		want string
	}{
		{&SendError{Class: SendUnregistered, Status: 404, Code: "UNREGISTERED", Message: "Requested entity was not found."},
			"send failed (unregistered, status 404, UNREGISTERED): Requested entity was not found."},
		{&SendError{Class: SendRetry, Err: errors.New("connection refused")}, "send failed (retry): connection refused"},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error(): got %q, want %q", got, tt.want)
		}
	}
}
