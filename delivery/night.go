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
	// wall is a local-time push's wall-clock time (herald.Push.LocalWall),
	// zero for another push; accepted is when the push was accepted: a
	// device whose zone's time came before it is late (counts.lateLocal).
	wall, accepted time.Time
}

// nightRuleFor is the rule of a page of p's fan-out from the cursor, at
// the service's time.
func (s *Service) nightRuleFor(p herald.Push, app herald.App, from sendstore.FanoutCursor) nightRule {
	r := nightRule{now: s.cfg.Now(), loc: app.Location(), charged: p.Rule().Charged}
	if p.Rule().CountsUsers {
		r.newFrom = from.Users
	}
	if p.LocalTime {
		r.wall, r.accepted = p.LocalWall(), p.CreatedAt
	}
	return r
}

// sendAt is when d is to be sent (its zone's time for a local-time push,
// else now), and whether it waits for it (a zone part) or is late.
func (r nightRule) sendAt(d herald.Device) (at time.Time, waits, late bool) {
	if r.wall.IsZero() {
		return r.now, false, false
	}
	due := herald.LocalAt(r.wall, d.Location(r.loc))
	if due.After(r.now) {
		return due, true, false
	}
	return r.now, false, due.Before(r.accepted)
}

// night reports whether at falls in d's night window.
func (r nightRule) night(d herald.Device, at time.Time) bool {
	return herald.IsNight(at, d.Location(r.loc))
}

// morning is when a delivery to d, due at at, deferred to the morning is
// sent: the next 08:00 in d's zone (herald.NightDefer).
func (r nightRule) morning(d herald.Device, at time.Time) time.Time {
	return herald.NextMorning(at, d.Location(r.loc))
}

// deferral collects a page's deliveries that wait: those deferred to the
// morning and a local-time push's zone parts, their indexes in the page,
// and at which of them a user is refunded should the deferred part be
// cancelled (one whose devices were all deferred or suppressed, so that
// nothing was sent to it).
type deferral struct {
	at     []int       // indexes into the page's deliveries, in order
	until  []time.Time // when each of at is sent
	zone   []bool      // each of at is in a zone part (not deferred to the morning)
	refund []int       // indexes into at: the first deferred delivery of a refundable user
}

// add makes the delivery at index i wait until until: in a zone part, or
// deferred to the morning. It returns its index into at.
func (d *deferral) add(i int, until time.Time, zone bool) int {
	d.at, d.until, d.zone = append(d.at, i), append(d.until, until), append(d.zone, zone)
	return len(d.at) - 1
}

// group ends a recipient's devices: sent counts those sent now or in a
// zone part, firstDeferred is the index into at of its first delivery
// deferred to the morning (-1 for none): a refundable user is refunded
// with it.
func (d *deferral) group(r nightRule, g recipientDevices, sent, firstDeferred int) {
	if firstDeferred >= 0 && sent == 0 && r.charged && g.idx >= r.newFrom {
		d.refund = append(d.refund, firstDeferred)
	}
}

// number puts the waiting deliveries of ds, p's, into chunks of their
// own after the page's other chunks, one run of chunks per instant and
// kind (devices of different zones have different mornings and zone
// times), earliest first, zone parts before the morning's at one instant;
// moves to past them, and returns them, each refunding what p cost for
// its refundable users (herald.Push.Cost).
func (d *deferral) number(p herald.Push, ds []herald.Delivery, chunkSize int, to *sendstore.FanoutCursor) []sendstore.DeferredChunk {
	refunds := make(map[int]int64, len(d.refund)) // index into at → half units
	for _, k := range d.refund {
		refunds[k] += p.Cost(1)
	}
	var chunks []sendstore.DeferredChunk
	for _, run := range d.runs() {
		n := 0 // deliveries of this run so far
		for k, i := range d.at {
			if !d.until[k].Equal(run.Until) || d.zone[k] != run.ZonePart {
				continue
			}
			if n%chunkSize == 0 {
				chunks = append(chunks, sendstore.DeferredChunk{Chunk: to.Chunk + len(chunks), Until: run.Until, ZonePart: run.ZonePart})
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

// runs returns the distinct (instant, kind) of the waiting deliveries,
// earliest first, a zone part before the morning's at one instant.
func (d *deferral) runs() []sendstore.DeferredChunk {
	var out []sendstore.DeferredChunk
	for k, t := range d.until {
		if !slices.ContainsFunc(out, func(c sendstore.DeferredChunk) bool { return c.Until.Equal(t) && c.ZonePart == d.zone[k] }) {
			out = append(out, sendstore.DeferredChunk{Until: t, ZonePart: d.zone[k]})
		}
	}
	slices.SortFunc(out, func(a, b sendstore.DeferredChunk) int {
		if c := a.Until.Compare(b.Until); c != 0 {
			return c
		}
		switch {
		case a.ZonePart == b.ZonePart:
			return 0
		case a.ZonePart:
			return -1
		}
		return 1
	})
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
