package herald

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// A store restored from a copy (`herald restore`, DESIGN 12) would send
// again what was being sent when the copy was taken: its pushes sending,
// and its scheduled pushes due, are held (StatusHeld) until an operator
// releases each (it resumes where it stood: what was in flight at the
// copy's instant is sent again, recorded as resent) or cancels it.

// ErrNotHeld refuses to release a push that is not held.
var ErrNotHeld = newError("ERR-AB-SCH-02", http.StatusConflict, "Push is not held.")

// NotHeld is ErrNotHeld saying what the push's status is.
func NotHeld(status PushStatus) *Error {
	return ErrNotHeld.With(Detail{Field: "status", Reason: fmt.Sprintf("is %s: only a held push (one a restore stopped) can be released", status)})
}

// HeldWork is what a held push has left to do, for its release: the
// status it was held in, whether its fan-out ended, its chunks not done
// (each with its morning when deferred to one, see NightDefer) and how
// many chunks its finish still waits for.
type HeldWork struct {
	Push       Push
	From       PushStatus
	FanoutDone bool
	Chunks     []HeldChunk
	OpenChunks int
}

// HeldChunk is a chunk of a held push not done: its number, and the
// morning it waits for when the fan-out deferred it.
type HeldChunk struct {
	Chunk   int
	Morning *time.Time
}

// HoldStore holds the pushes of a restored store and lets an operator
// release or cancel each.
type HoldStore interface {
	// HoldPushes marks held every push sending and every scheduled push
	// due at or before at (the copy's instant), and returns them, oldest
	// first.
	HoldPushes(ctx context.Context, at time.Time) ([]Push, error)
	// HeldWork returns what a held push has left. ErrNotFound; NotHeld.
	HeldWork(ctx context.Context, pushID string) (HeldWork, error)
	// A release (StepRelease, with the jobs HeldWork said are left) and
	// a cancel (StepCancel: one that had not begun is refunded, as a
	// scheduled push cancelled) are steps: ScheduleStore.StepPush.
}
