package delivery

import (
	"context"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// Spread-out sends (options.spreadMinutes, herald.Push.SpreadDue): a
// spread push's users are due evenly over its minutes from its start,
// each user's devices together. The schedule is read from what the push
// keeps (its start, the users its fan-out counted at the start) and from
// each slot's place (its RecipientIdx), never from a timer in memory: a
// chunk's run sends the slots that are due and comes back when the next
// one is, so a run after a restart, or on another node, keeps the
// schedule, and the chunk's guarded range sends none twice. Spreading
// only slows: the pacer's rates still hold.

// spreadNap is the longest a chunk's run waits in its own process for its
// next slot; a longer wait ends the run, its job due again then.
const spreadNap = time.Second

// spreadJobs makes the send job of each chunk of a spread push's page due
// at its first slot's time, on the start as far as the page knows it (the
// start recorded, or now on the first page: never after the start the
// page records), so that no job runs long before its sends. A job that
// runs early waits for its slots (see chunk.spread).
func (s *Service) spreadJobs(f *sendstore.Fanout, p herald.Push) {
	if !p.Spread() {
		return
	}
	if p.StartedAt == nil {
		now := s.cfg.Now()
		p.StartedAt, p.SpreadUsers = &now, f.SpreadUsers
	}
	first := map[int]int{} // a chunk's first slot's user
	for _, d := range f.Deliveries {
		if d.State != herald.DeliveryPending {
			continue
		}
		if idx, ok := first[d.Chunk]; !ok || d.RecipientIdx < idx {
			first[d.Chunk] = d.RecipientIdx
		}
	}
	for i, j := range f.Jobs {
		if a, ok := j.(SendArgs); ok {
			if idx, ok := first[a.Chunk]; ok {
				a.Due = p.SpreadDue(idx)
				f.Jobs[i] = a
			}
		}
	}
}

// spread returns how many of the slots (the next ones of the chunk, in
// order) are due now: all for a push not spread. When none is, it waits
// in-process for the first when it is due within spreadNap (and the run
// may go on), and then goes on only while the push is still sending (it
// may have been cancelled meanwhile); else it ends the run until then,
// whose next run starts only for a push still sending (see send).
func (c *chunk) spread(ctx context.Context, slots []herald.Delivery, res *chunkResult) int {
	if !c.push.Spread() {
		return len(slots)
	}
	for {
		now := c.s.cfg.Now()
		n := 0
		for n < len(slots) && !c.push.SpreadDue(slots[n].RecipientIdx).After(now) {
			n++
		}
		wait := c.push.SpreadDue(slots[0].RecipientIdx).Sub(now)
		switch {
		case n > 0:
			return n
		case wait > spreadNap || time.Now().Add(wait).After(c.yieldAt):
			res.comeBack(wait)
			return 0
		}
		if err := c.s.sleep(ctx, wait); err != nil {
			res.err = err
			return 0
		}
		if p, err := c.s.sends.PushRecord(ctx, c.push.ID); err != nil || p.Status != herald.StatusSending {
			res.err, res.stopped = err, err == nil // cancelled meanwhile: nothing more is sent
			return 0
		}
	}
}
