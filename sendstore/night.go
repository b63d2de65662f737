package sendstore

import "time"

// DeferredChunk is a chunk of a fan-out page whose slots wait for the
// morning: its send job runs at Until (the next 08:00 in the app's time
// zone), and cancelling it refunds RefundHalf (its users who were sent
// nothing else, 0.5 each).
type DeferredChunk struct {
	Chunk      int
	Until      time.Time
	RefundHalf int64
}
