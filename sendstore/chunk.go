package sendstore

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/heraldpush/herald"
)

// Chunk is a chunk's state as a step finds it: its range, and Stopped,
// set when its push failed. It is a value: Apply turns it and a step into
// the next state and the writes that go with it, reading nothing; the
// store loads the chunk and the step's Facts, applies, and persists.
type Chunk struct {
	Range
	Stopped bool
}

// Holding is a device as a step's marking checks it: the token it holds
// now, and the user it is mapped to (nil: none).
type Holding struct {
	Token string
	User  *string
}

// Facts are what a step depends on besides its chunk, as the store loads
// them in the step's transaction.
type Facts struct {
	// Devices are the step's targets' devices that still exist, by id.
	Devices map[string]Holding
	// Capped are the targets' CapUsers whose claim of a receipt was
	// refused: they had reached the app's frequency cap.
	Capped map[string]bool
	// RetryChunk is the number the step's retry chunk takes (the push's
	// next, below every other chunk's), 0 when the push is no longer
	// sending. Read only for a step with a retry chunk.
	RetryChunk int
}

// Effects are the writes of a step besides the chunk's new range.
type Effects struct {
	// Sent counts the slots settled as first sends that reached FCM:
	// counted, not written as rows. SentOldBadge and SentOldImage are the
	// step's (see ChunkStep).
	Sent, SentOldBadge, SentOldImage int
	// Rows are the delivery rows to write: the step's, and the slots of
	// its retry chunk recorded failed when the push failed meanwhile.
	Rows []herald.Delivery
	// Retry is the retry chunk to insert with its job; nil for none.
	Retry *NumberedChunk
	// Drop are the dead tokens whose devices are deleted.
	Drop []DeadToken
	// Events are the delivery events of the outcomes settled (see
	// ChunkStep.Stream): one per device sent or failed, in position
	// order of the sends and then of the rows, without the app and time
	// (the store's).
	Events []herald.DeliveryEvent
}

// NumberedChunk is a retry chunk with its number: its slots carry it, and
// so does its job.
type NumberedChunk struct {
	Chunk int
	Slots []herald.Delivery
	Job   herald.Job
}

// Apply is the chunk machine's one transition: the chunk after step,
// given the facts, and the writes that go with it.
//
//   - A step whose shape is impossible (the cursor moving back or past the
//     in-flight end, the end moving back, more rows, retries or targets
//     than the slots it moves) is an error; a step from a range the
//     chunk no longer has is ErrChunkMoved. Neither writes anything.
//   - The cursor moves to step.New.Settled: every slot it passes settles,
//     as a row (step.Rows), in the retry chunk (step.Retry) or, for the
//     rest, as a counted first send.
//   - Unless the chunk is stopped, the in-flight end moves to
//     step.New.Marked, or to the first target whose device no longer
//     holds its token (or is no longer mapped to its Owner): the one
//     guard that a device is sent only the token it holds, for the user
//     it belongs to; and at the first whose user reached the app's
//     frequency cap (Facts.Capped). The slots from there on are left to
//     be judged again.
//   - step.Retry becomes a retry chunk numbered Facts.RetryChunk, its
//     slots and job numbered with it; when the chunk is stopped or the
//     push no longer sending, its slots are rows, failed with their last
//     error, and the chunk returned is Stopped.
func (c Chunk) Apply(st ChunkStep, f Facts) (Chunk, Effects, error) {
	if err := st.Check(); err != nil {
		return c, Effects{}, err
	}
	if c.Range != st.Old {
		return c, Effects{}, ErrChunkMoved
	}
	next := Chunk{Range: Range{Settled: st.New.Settled, Marked: c.Marked}, Stopped: c.Stopped}
	if !c.Stopped {
		next.Marked = f.markable(st)
	}
	e := Effects{Sent: st.New.Settled - st.Old.Settled - len(st.Rows) - st.retried(), SentOldBadge: st.SentOldBadge,
		SentOldImage: st.SentOldImage, Rows: st.Rows, Drop: st.Drop}
	switch {
	case st.Retry == nil:
	case c.Stopped || f.RetryChunk == 0:
		next.Stopped = true
		e.Rows = append(slices.Clip(e.Rows), failedSlots(st.Retry.Slots)...)
	default:
		slots := slices.Clone(st.Retry.Slots)
		for i := range slots {
			slots[i].Chunk = f.RetryChunk
		}
		e.Retry = &NumberedChunk{Chunk: f.RetryChunk, Slots: slots, Job: st.Retry.Job.ForChunk(f.RetryChunk)}
	}
	if st.Stream != nil {
		e.Events = st.Stream.events(st.Sent, e.Rows)
	}
	return next, e, nil
}

// events are the delivery events of a step's first sends and rows: a
// sent row (a resent slot) or a first send is push.sent, a failed or
// undeliverable row push.failed with its reason (else its error); a
// suppressed row is no event. Only the types the app takes are made.
func (s Stream) events(sent, rows []herald.Delivery) []herald.DeliveryEvent {
	var out []herald.DeliveryEvent
	add := func(t herald.WebhookEvent, d herald.Delivery, reason string) {
		out = append(out, herald.DeliveryEvent{Type: t, RequestGroupID: s.RequestGroupID, UserID: d.UserID,
			DeviceID: d.DeviceID, TokenSuffix: herald.TokenSuffix(d.Token), Reason: reason})
	}
	if s.Sent {
		for _, d := range sent {
			add(herald.WebhookSent, d, "")
		}
	}
	for _, d := range rows {
		switch {
		case d.State == herald.DeliverySent && s.Sent:
			add(herald.WebhookSent, d, "")
		case (d.State == herald.DeliveryFailed || d.State == herald.DeliveryUndeliverable) && s.Failed:
			add(herald.WebhookFailed, d, cmp.Or(d.Reason, d.Error))
		}
	}
	return out
}

// Check reports a step whose shape is impossible whatever the chunk (see
// Apply).
func (st ChunkStep) Check() error {
	if st.New.Settled < st.Old.Settled || st.New.Settled > st.Old.Marked || st.New.Marked < st.Old.Marked ||
		st.New.Settled-st.Old.Settled < len(st.Rows)+st.retried()+len(st.Sent) || len(st.Targets) > st.New.Marked-st.Old.Marked {
		return fmt.Errorf("sendstore: chunk step out of range: %+v to %+v, %d rows, %d retried, %d targets",
			st.Old, st.New, len(st.Rows), st.retried(), len(st.Targets))
	}
	return nil
}

// retried counts the step's slots settled into a retry chunk.
func (st ChunkStep) retried() int {
	if st.Retry == nil {
		return 0
	}
	return len(st.Retry.Slots)
}

// markable returns where a step's in-flight range may end: at
// st.New.Marked, or at the first target whose device no longer holds its
// token (or is no longer mapped to its owner), or whose user's claim of
// a receipt was refused (Facts.Capped).
func (f Facts) markable(st ChunkStep) int {
	for _, t := range st.Targets {
		h, ok := f.Devices[t.DeviceID]
		if !ok || h.Token != t.Token || t.Owner != nil && (h.User == nil || *h.User != *t.Owner) || f.Capped[t.CapUser] {
			return t.Pos
		}
	}
	return st.New.Marked
}

// failedSlots are the slots of a retry chunk whose push failed meanwhile,
// recorded failed with their last error instead of sent again.
func failedSlots(ds []herald.Delivery) []herald.Delivery {
	out := slices.Clone(ds)
	for i := range out {
		out[i].State = herald.DeliveryFailed
	}
	return out
}
