package delivery

import (
	"context"
	"sync"
	"time"

	"github.com/heraldpush/herald"
)

// sendRows sends a chunk's open rows (retries, sends cut off, slots a
// crash left in flight) in waves of Concurrency: the uncommon case, so each
// row is marked and recorded on its own. Each wave is judged again at send
// time (the push still sending; each delivery resolved to the device and
// token its user holds now; consent and the night window now), marked in
// flight, sent in parallel, and its outcomes committed in one transaction.
// A crash can thus only re-send the wave that was in flight, and exactly
// those deliveries are recorded as resent.
func (c *chunk) sendRows(ctx context.Context, ds []herald.Delivery) chunkResult {
	var res chunkResult
	for start, step := 0, 0; start < len(ds) && res.authFailure == ""; start += step {
		if start > 0 && time.Now().After(c.yieldAt) {
			res.more = true // the rest in the job's next run
			return res
		}
		if !c.authorize(ctx, &res) {
			return res
		}
		if step = c.paced(ctx, min(c.s.cfg.Concurrency, len(ds)-start), &res); step == 0 {
			return res
		}
		wave, err := c.judge(ctx, ds[start:start+step], true)
		if err != nil || wave == nil {
			c.unpaced(step)
			res.err, res.stopped = err, err == nil
			return res
		}
		if res.err = c.markInflight(ctx, wave); res.err != nil {
			c.unpaced(step)
			return res
		}
		c.unpaced(step - markedIn(wave))
		c.sendWave(ctx, wave, &res)
		// Recorded even when the job is being cancelled: these were sent.
		if res.err = c.s.cfg.Store.RecordOutcomes(context.WithoutCancel(ctx), c.app.ID, c.push.ID, outcomes(wave, &res)); res.err != nil {
			return res
		}
	}
	return res
}

// markInflight marks the wave's deliveries to send in flight, each guarded
// by its device still holding its token (and being the user's): one that
// changed since judge is left open and judged again after a short pause.
func (c *chunk) markInflight(ctx context.Context, wave []send) error {
	var targets []herald.SendTarget
	for _, sd := range wave {
		if !sd.toSend {
			continue
		}
		t := herald.SendTarget{Seq: sd.d.Seq, DeviceID: sd.d.DeviceID, Token: sd.d.Token}
		if !c.push.Targeted() {
			t.Owner = &sd.d.UserID
		}
		targets = append(targets, t)
	}
	if len(targets) == 0 {
		return nil
	}
	marked, err := c.s.cfg.Store.MarkInflight(ctx, c.app.ID, c.push.ID, targets)
	if err != nil {
		return err
	}
	ok := make(map[int]bool, len(marked))
	for _, seq := range marked {
		ok[seq] = true
	}
	for i := range wave {
		wave[i].marked = ok[wave[i].d.Seq]
	}
	return nil
}

// sendWave sends the wave's marked deliveries in parallel.
func (c *chunk) sendWave(ctx context.Context, wave []send, res *chunkResult) {
	var wg sync.WaitGroup
	for i := range wave {
		if sd := &wave[i]; sd.marked {
			wg.Go(func() { c.sendOne(ctx, sd) })
		}
	}
	wg.Wait()
	for i := range wave {
		if sd := &wave[i]; sd.marked {
			c.s.cfg.Observe(string(sd.outcome.State))
			res.add(sd)
		}
	}
}

// outcomes returns the outcomes to record: every delivery judged final or
// sent. A delivery to send that the store did not mark stays open, and the
// chunk is judged again shortly.
func outcomes(wave []send, res *chunkResult) []herald.Outcome {
	out := make([]herald.Outcome, 0, len(wave))
	for _, sd := range wave {
		if sd.toSend && !sd.marked {
			res.retryIn = max(res.retryIn, time.Second)
			continue
		}
		out = append(out, sd.outcome)
	}
	return out
}

// markedIn counts the deliveries of a wave marked in flight, the ones sent.
func markedIn(wave []send) int {
	n := 0
	for _, sd := range wave {
		if sd.marked {
			n++
		}
	}
	return n
}
