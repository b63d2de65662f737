package webhook_test

import (
	"testing"
	"time"

	"github.com/heraldpush/herald/webhook"
)

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		attempt int
		want    time.Duration
		wantOK  bool
	}{
		{attempt: -1},
		{attempt: 0},
		{attempt: 1, want: 5 * time.Second, wantOK: true},
		{attempt: 2, want: 5 * time.Minute, wantOK: true},
		{attempt: 3, want: 30 * time.Minute, wantOK: true},
		{attempt: 4, want: 2 * time.Hour, wantOK: true},
		{attempt: 5, want: 5 * time.Hour, wantOK: true},
		{attempt: 6, want: 10 * time.Hour, wantOK: true},
		{attempt: 7},
		{attempt: 100},
	}
	for _, tt := range tests {
		got, ok := webhook.RetryDelay(tt.attempt)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("RetryDelay(%d): got (%s, %v), want (%s, %v)", tt.attempt, got, ok, tt.want, tt.wantOK)
		}
	}
}
