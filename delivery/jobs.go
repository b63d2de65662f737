package delivery

import (
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald"
)

// schedulerSlack is how early a scheduled push's job is made due: River
// moves scheduled jobs to available every few seconds, so the job is woken
// ahead and waits in-process for the exact time.
const schedulerSlack = 6 * time.Second

// FanoutArgs resolves a push's users to tokens at send time.
type FanoutArgs struct {
	PushID string `json:"pushId"`
	// SendAt is the scheduled time; zero for an immediate push. A job whose
	// SendAt no longer matches the push (it was edited) does nothing.
	SendAt time.Time `json:"sendAt,omitzero"`
	// RunAt is when River runs the job: SendAt for a scheduled push, zero
	// (at once) for one released from a hold, whose fan-out still checks
	// SendAt (see releaseJobs).
	RunAt time.Time `json:"runAt,omitzero"`
	// Sends: the push's fan-out sends its chunk itself when it makes one
	// (see lone), so the job runs on the send queue.
	Sends bool `json:"sends,omitempty"`
	// High: the push is high-priority (herald.PriorityHigh), so the job
	// runs on the high lane.
	High bool `json:"high,omitempty"`
}

// Kind names the job.
func (FanoutArgs) Kind() string { return "herald.fanout" }

// Queues: sends have their own, so fan-outs queued behind each other never
// starve the sends they create; scheduled fan-outs, which mostly wait for
// their second, have their own too. High-priority pushes have the high
// lane, fan-outs and sends together: its workers are never busy with a
// normal push's chunks, so a one-time code waits for no blast (and its
// sends take the tenth of the rate kept for them, see pacer).
const (
	QueueSend      = "send"
	QueueFanout    = "fanout"
	QueueScheduled = "scheduled"
	QueueHigh      = "high"
)

// Queues returns River's queue configuration for delivery's jobs.
func Queues() map[string]river.QueueConfig {
	return map[string]river.QueueConfig{
		QueueSend:          {MaxWorkers: 14}, // with the fan-outs that send their lone chunk (FanoutArgs.Sends)
		QueueHigh:          {MaxWorkers: 4},
		QueueFanout:        {MaxWorkers: 4},
		QueueScheduled:     {MaxWorkers: 20},
		river.QueueDefault: {MaxWorkers: 4}, // finish and webhook jobs
	}
}

// InsertOpts makes a scheduled push's job due just before its time, puts
// a high-priority push's on the high lane, and the job of one that sends
// its chunk itself on the send queue. A scheduled high push's fan-out
// waits on the scheduled queue (its workers wait there for their second,
// which would hold the high lane's); its chunks ride the high lane.
func (a FanoutArgs) InsertOpts() river.InsertOpts {
	switch {
	case a.RunAt.IsZero() && a.High:
		return river.InsertOpts{Queue: QueueHigh}
	case a.RunAt.IsZero() && a.Sends:
		return river.InsertOpts{Queue: QueueSend}
	case a.RunAt.IsZero():
		return river.InsertOpts{Queue: QueueFanout}
	}
	return river.InsertOpts{Queue: QueueScheduled, ScheduledAt: a.RunAt.Add(-schedulerSlack)}
}

// SendArgs sends one chunk of a push's tokens: one of the fan-out's, at
// once, or a retry chunk at its backoff (At).
type SendArgs struct {
	PushID string `json:"pushId"`
	Chunk  int    `json:"chunk"`
	// Due is when a retry chunk is due, or a spread push's chunk (its
	// first slot, see spreadJobs), on the service's clock (River's); zero
	// for at once.
	Due time.Time `json:"due,omitzero"`
	// Morning is when a deferred chunk is sent (the next 08:00, see
	// herald.NightDefer), on the service's clock; its retry chunks keep it,
	// as their hour of retries runs from it. Zero for a chunk sent at
	// once. RunAt is when River runs the job: Morning for a chunk the
	// fan-out deferred, zero (at once, the run waiting for its morning) for
	// one released from a hold.
	Morning time.Time `json:"morning,omitzero"`
	RunAt   time.Time `json:"runAt,omitzero"`
	// High: the chunk is a high-priority push's, sent on the high lane.
	High bool `json:"high,omitempty"`
}

// Kind names the job.
func (SendArgs) Kind() string { return "herald.send" }

// ForChunk returns the job of chunk number chunk: a retry chunk's job,
// made before the chunk has its number (see sendstore.RetryChunk).
func (a SendArgs) ForChunk(chunk int) herald.Job {
	a.Chunk = chunk
	return a
}

// deferred tells a chunk the fan-out deferred to the morning (a retry
// chunk of one keeps its morning, but is numbered below 0).
func (a SendArgs) deferred() bool { return !a.Morning.IsZero() && a.Chunk >= 0 }

// InsertOpts puts sends on their own queue (a high-priority push's on the
// high lane): a retry chunk's due at Due, a deferred chunk's just before
// its morning, as a scheduled push's fan-out.
func (a SendArgs) InsertOpts() river.InsertOpts {
	queue := QueueSend
	if a.High {
		queue = QueueHigh
	}
	switch {
	case !a.Due.IsZero():
		return river.InsertOpts{Queue: queue, ScheduledAt: a.Due}
	case !a.RunAt.IsZero():
		return river.InsertOpts{Queue: queue, ScheduledAt: a.RunAt.Add(-schedulerSlack)}
	}
	return river.InsertOpts{Queue: queue}
}

// FinishArgs ends a push whose chunks are all done.
type FinishArgs struct {
	PushID string `json:"pushId"`
}

// Kind names the job.
func (FinishArgs) Kind() string { return "herald.finish" }

// WebhookArgs posts one webhook message; the report is fixed at creation
// so every retry sends the same message under the same id.
type WebhookArgs struct {
	Report herald.UndeliverableReport `json:"report"`
}

// Kind names the job.
func (WebhookArgs) Kind() string { return "herald.webhook" }

// InsertOpts allows the first attempt and the six retries of DESIGN.md.
func (WebhookArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: herald.WebhookAttempts}
}
