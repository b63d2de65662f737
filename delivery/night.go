package delivery

import (
	"context"
	"slices"
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// nightRule is how a fan-out page treats consent and the night window,
// each device judged in its own zone (herald.Device.Location).
type nightRule struct {
	now time.Time      // when the page is fanned out
	loc *time.Location // the app's zone, for the devices that reported none
	// charged: the push is charged per user (herald.KindRule.Charged);
	// newFrom is the index of the page's first user not charged on an
	// earlier page (a user whose devices began there is not refunded
	// here, see deferral).
	charged bool
	newFrom int
}

// nightRuleFor is the rule of a page of p's fan-out from the cursor, at
// the service's time.
func (s *Service) nightRuleFor(p herald.Push, app herald.App, from sendstore.FanoutCursor) nightRule {
	r := nightRule{now: s.cfg.Now(), loc: app.Location(), charged: p.Rule().Charged}
	if p.Rule().CountsUsers {
		r.newFrom = from.Users
	}
	return r
}

// night reports whether the page is fanned out in d's night window.
func (r nightRule) night(d herald.Device) bool { return herald.IsNight(r.now, d.Location(r.loc)) }

// morning is when a delivery to d deferred to the morning is sent: the
// next 08:00 in d's zone (herald.NightDefer).
func (r nightRule) morning(d herald.Device) time.Time {
	return herald.NextMorning(r.now, d.Location(r.loc))
}

// deferral collects a page's deliveries deferred to the morning: their
// indexes in the page, and at which of them a user is refunded should the
// deferred part be cancelled (one whose devices were all deferred or
// suppressed, so that nothing was sent to it).
type deferral struct {
	at     []int       // indexes into the page's deliveries, in order
	until  []time.Time // the morning of each of at
	refund []int       // indexes into at: the first deferred delivery of a refundable user
}

// add defers the delivery at index i to its morning.
func (d *deferral) add(i int, morning time.Time) {
	d.at, d.until = append(d.at, i), append(d.until, morning)
}

// group ends a recipient's devices: sentNow and deferred counted in it.
// A refundable user is refunded with its first deferred delivery.
func (d *deferral) group(r nightRule, g recipientDevices, sentNow, deferred int) {
	if deferred > 0 && sentNow == 0 && r.charged && g.idx >= r.newFrom {
		d.refund = append(d.refund, len(d.at)-deferred)
	}
}

// number puts the deferred deliveries of ds, p's, into chunks of their own
// after the page's other chunks, one run of chunks per morning (devices
// of different zones have different mornings), earliest first; moves to
// past them, and returns them, each refunding what p cost for its
// refundable users (herald.Push.Cost).
func (d *deferral) number(p herald.Push, ds []herald.Delivery, chunkSize int, to *sendstore.FanoutCursor) []sendstore.DeferredChunk {
	refunds := make(map[int]int64, len(d.refund)) // index into at → half units
	for _, k := range d.refund {
		refunds[k] += p.Cost(1)
	}
	var chunks []sendstore.DeferredChunk
	for _, morning := range distinctTimes(d.until) {
		n := 0 // deliveries of this morning so far
		for k, i := range d.at {
			if !d.until[k].Equal(morning) {
				continue
			}
			if n%chunkSize == 0 {
				chunks = append(chunks, sendstore.DeferredChunk{Chunk: to.Chunk + len(chunks), Until: morning})
			}
			c := &chunks[len(chunks)-1]
			ds[i].Chunk = c.Chunk
			c.RefundHalf += refunds[k]
			n++
		}
	}
	to.Chunk += len(chunks)
	return chunks
}

// distinctTimes returns the distinct instants of ts, earliest first.
func distinctTimes(ts []time.Time) []time.Time {
	var out []time.Time
	for _, t := range ts {
		if !slices.ContainsFunc(out, t.Equal) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

// deferJobs makes the send jobs of a page's deferred chunks wait for their
// morning.
func (s *Service) deferJobs(f *sendstore.Fanout) {
	for _, dc := range f.Deferred {
		for i, j := range f.Jobs {
			if a, ok := j.(SendArgs); ok && a.Chunk == dc.Chunk {
				a.Morning, a.RunAt = dc.Until, dc.Until
				f.Jobs[i] = a
			}
		}
	}
}

// untilMorning holds a deferred chunk's send job until its time on the
// service's clock: it waits when the time is near, else snoozes the job
// until shortly before it.
func (s *Service) untilMorning(ctx context.Context, a SendArgs) error {
	d := a.Morning.Sub(s.cfg.Now())
	switch {
	case a.Morning.IsZero() || d <= 0:
		return nil
	case d > 2*schedulerSlack:
		return river.JobSnooze(d - schedulerSlack)
	}
	return s.waitUntil(ctx, a.Morning)
}

// deferredCancelled answers the cancel of a push's deferred part with
// the push as it stands. When the cancel closed the push's last open
// part it finishes the push at once (the queued finish job then finds it
// finished), so that the push answered is done, its counts final. A
// finish that fails here is left to that job.
func (s *Service) deferredCancelled(ctx context.Context, p herald.Push, closed bool) (herald.Push, error) {
	if closed {
		if err := s.finish(ctx, p.ID); err != nil {
			s.cfg.Logger.Warn("finishing the push after its deferred part was cancelled; its finish job will", "app", p.AppID, "push", p.ID, "err", err)
		}
	}
	return s.cfg.Store.Push(ctx, p.ID)
}
