package herald

import (
	"bytes"
	"time"
)

// IdempotencyRecord is a stored Idempotency-Key: the hash of the body it
// came with, the push it stands for, and when it was first used.
type IdempotencyRecord struct {
	Hash      []byte
	PushID    string
	CreatedAt time.Time
}

// IdempotencyDecision is what a request carrying a key gets.
type IdempotencyDecision int

// The decisions.
const (
	// IdempotencyClaim: the key is free (never used, or used more than
	// IdempotencyWindow ago); the request claims it for its push.
	IdempotencyClaim IdempotencyDecision = iota
	// IdempotencyReplay: the key was used within the window with the same
	// body; the first push's answer is replayed and nothing is sent.
	IdempotencyReplay
)

// DecideIdempotency judges a request carrying idem at now against the
// stored record (nil when the key was never used). ErrIdempotencyReuse
// when the key was used within the window with another body.
func DecideIdempotency(stored *IdempotencyRecord, idem Idempotency, now time.Time) (IdempotencyDecision, error) {
	if stored == nil || !idempotencyLive(stored.CreatedAt, now) {
		return IdempotencyClaim, nil
	}
	if !bytes.Equal(stored.Hash, idem.Hash) {
		return IdempotencyReplay, ErrIdempotencyReuse
	}
	return IdempotencyReplay, nil
}

// idempotencyLive reports whether a key first used at created still binds
// at now.
func idempotencyLive(created, now time.Time) bool {
	return now.Sub(created) < IdempotencyWindow
}
