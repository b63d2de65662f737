package herald

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestWebhookRetry(t *testing.T) {
	t.Parallel()
	failed := errors.New("503")
	refused := fmt.Errorf("private address: %w", ErrNoRetry)
	tests := []struct {
		attempt int
		err     error
		want    time.Duration
		retry   bool
	}{
		{0, failed, 5 * time.Second, false},
		{1, failed, 5 * time.Second, true}, {2, failed, 5 * time.Minute, true}, {3, failed, 30 * time.Minute, true},
		{4, failed, 2 * time.Hour, true}, {5, failed, 5 * time.Hour, true}, {6, failed, 10 * time.Hour, true},
		{6, nil, 10 * time.Hour, true},
		{7, failed, 10 * time.Hour, false}, {100, failed, 10 * time.Hour, false},
		{1, refused, 5 * time.Second, false}, {3, refused, 30 * time.Minute, false},
	}
	for _, tt := range tests {
		got, retry := WebhookRetry(tt.attempt, tt.err)
		if got != tt.want || retry != tt.retry {
			t.Errorf("WebhookRetry(%d, %v): got (%v, %v), want (%v, %v)", tt.attempt, tt.err, got, retry, tt.want, tt.retry)
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
