package herald

import (
	"errors"
	"testing"
	"time"
)

func TestDecideIdempotency(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	req := Idempotency{Key: "k", Hash: []byte("body-1")}
	tests := []struct {
		name    string
		stored  *IdempotencyRecord
		want    IdempotencyDecision
		wantErr error
	}{
		{"NeverUsed", nil, IdempotencyClaim, nil},
		{"SameBody", &IdempotencyRecord{Hash: []byte("body-1"), PushID: "p", CreatedAt: now.Add(-time.Hour)}, IdempotencyReplay, nil},
		{"OtherBody", &IdempotencyRecord{Hash: []byte("body-2"), PushID: "p", CreatedAt: now.Add(-time.Hour)}, IdempotencyReplay, ErrIdempotencyReuse},
		{"JustInside", &IdempotencyRecord{Hash: []byte("body-2"), CreatedAt: now.Add(-IdempotencyWindow + time.Millisecond)}, IdempotencyReplay, ErrIdempotencyReuse},
		{"ExpiredAtWindow", &IdempotencyRecord{Hash: []byte("body-2"), CreatedAt: now.Add(-IdempotencyWindow)}, IdempotencyClaim, nil},
		{"ExpiredSameBody", &IdempotencyRecord{Hash: []byte("body-1"), CreatedAt: now.Add(-48 * time.Hour)}, IdempotencyClaim, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecideIdempotency(tt.stored, req, now)
			if !errors.Is(err, tt.wantErr) || (err == nil && got != tt.want) {
				t.Errorf("got %v, %v; want %v, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
