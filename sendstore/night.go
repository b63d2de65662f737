package sendstore

import "time"

// DeferredChunk is a chunk of a fan-out page whose slots wait for the
// morning: its send job runs at Until (the next 08:00 in the app's time
// zone), and cancelling it refunds RefundHalf (its users who were sent
// nothing else, 0.5 each).
//
// A zone part of a local-time push (herald.Push.LocalTime) is one too,
// with ZonePart set: Until is when its devices' zone reaches the push's
// wall-clock time; it refunds nothing, and is not the night's deferred
// part (not counted deferredNight, nor cancelled with it).
type DeferredChunk struct {
	Chunk      int
	Until      time.Time
	RefundHalf int64
	ZonePart   bool
}
