package delivery

import (
	"testing"
	"time"

	"github.com/riverqueue/river"
)

// TestHighLaneQueues: a high-priority push's fan-out (but a scheduled
// one's, which waits on the scheduled queue) and its chunks, retry chunks
// included, run on the high lane; a normal push's never do.
func TestHighLaneQueues(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		args river.JobArgsWithInsertOpts
		want string
	}{
		{"HighFanout", FanoutArgs{PushID: "p", High: true}, QueueHigh},
		{"HighLoneFanout", FanoutArgs{PushID: "p", High: true, Sends: true}, QueueHigh},
		{"HighScheduledFanout", FanoutArgs{PushID: "p", High: true, SendAt: at, RunAt: at}, QueueScheduled},
		{"HighChunk", SendArgs{PushID: "p", Chunk: 3, High: true}, QueueHigh},
		{"HighRetryChunk", SendArgs{PushID: "p", Chunk: -1, Due: at, High: true}, QueueHigh},
		{"NormalFanout", FanoutArgs{PushID: "p"}, QueueFanout},
		{"NormalLoneFanout", FanoutArgs{PushID: "p", Sends: true}, QueueSend},
		{"NormalChunk", SendArgs{PushID: "p", Chunk: 3}, QueueSend},
		{"NormalRetryChunk", SendArgs{PushID: "p", Chunk: -1, Due: at}, QueueSend},
	} {
		if got := tt.args.InsertOpts().Queue; got != tt.want {
			t.Errorf("%s: queue %q, want %q", tt.name, got, tt.want)
		}
	}
	if _, ok := Queues()[QueueHigh]; !ok {
		t.Errorf("Queues: no %q queue, so its jobs would never run", QueueHigh)
	}
}
