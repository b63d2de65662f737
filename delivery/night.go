package delivery

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// nightRule is how a fan-out page treats consent and the night window.
type nightRule struct {
	night bool // the page is fanned out in the night window
	// morning is the next 08:00 in the app's zone: when deferred
	// deliveries are sent (herald.NightDefer).
	morning time.Time
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
	now, loc := s.cfg.Now(), app.Location()
	r := nightRule{night: herald.IsNight(now, loc), morning: herald.NextMorning(now, loc), charged: p.Rule().Charged}
	if p.Rule().CountsUsers {
		r.newFrom = from.Users
	}
	return r
}

// deferral collects a page's deliveries deferred to the morning: their
// indexes in the page, and at which of them a user is refunded should the
// deferred part be cancelled (one whose devices were all deferred or
// suppressed, so that nothing was sent to it).
type deferral struct {
	at     []int // indexes into the page's deliveries, in order
	refund []int // indexes into at: the first deferred delivery of a refundable user
}

// group ends a recipient's devices: sentNow and deferred counted in it.
func (d *deferral) group(r nightRule, g recipientDevices, sentNow, deferred int) {
	if deferred > 0 && sentNow == 0 && r.charged && g.idx >= r.newFrom {
		d.refund = append(d.refund, len(d.at)-deferred)
	}
}

// number puts the deferred deliveries of ds, p's, into chunks of their own
// after the page's other chunks, moves to past them, and returns them,
// each refunding what p cost for its refundable users (herald.Push.Cost).
func (d *deferral) number(p herald.Push, ds []herald.Delivery, r nightRule, chunkSize int, to *sendstore.FanoutCursor) []sendstore.DeferredChunk {
	if len(d.at) == 0 {
		return nil
	}
	chunks := make([]sendstore.DeferredChunk, (len(d.at)+chunkSize-1)/chunkSize)
	for i := range chunks {
		chunks[i] = sendstore.DeferredChunk{Chunk: to.Chunk + i, Until: r.morning}
	}
	for k, i := range d.at {
		ds[i].Chunk = to.Chunk + k/chunkSize
	}
	for _, k := range d.refund {
		chunks[k/chunkSize].RefundHalf += p.Cost(1)
	}
	to.Chunk += len(chunks)
	return chunks
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
