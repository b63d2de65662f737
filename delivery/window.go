package delivery

import (
	"context"
	"errors"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// sendSlots sends a chunk's slots through a sliding window: at most
// Concurrency slots lie between the first one whose send has not come back
// and the last one marked in flight. Slots are judged and marked in
// batches as the window makes room, each batch one write that also
// settles the sends that came back since the last, in order; sends go out
// as soon as they are marked, so none waits for the slowest of a wave.
//
// Slots a run left in flight (it died, or was cut off) are first settled
// into a retry chunk due at once, each marked resent: a send of it may
// have reached FCM.
func (c *chunk) sendSlots(ctx context.Context, chunkNo int, work sendstore.ChunkWork) chunkResult {
	var res chunkResult
	w := &window{c: c, chunk: chunkNo, settled: work.Settled, marked: work.Marked}
	slots := work.Slots
	if inFlight := work.Marked - work.Settled; inFlight > 0 {
		retry := make([]herald.Delivery, inFlight)
		for i, d := range slots[:inFlight] {
			d.Resent = true
			retry[i] = d
		}
		st := w.newStep()
		st.New.Settled = work.Marked
		st.Retry = &sendstore.RetryChunk{Slots: retry, Job: c.retryJob(0)}
		if w.advance(ctx, st, &res); w.stop {
			return res
		}
		slots = slots[inFlight:]
	}
	if len(slots) == 0 {
		return res
	}
	size := c.s.cfg.Concurrency
	w.slots, w.base = slots, w.marked
	w.sends, w.back = make([]send, len(slots)), make([]bool, len(slots))
	w.todo, w.done = make(chan int, size), make(chan int, size)
	// The window's senders live as long as the run: a goroutine per send
	// would grow a fresh stack through the HTTP/2 client every time.
	for range min(size, len(slots)) {
		go func() {
			for i := range w.todo {
				c.sendOne(ctx, &w.sends[i])
				w.done <- i
			}
		}()
	}
	defer close(w.todo)
	w.run(ctx, &res)
	return res
}

// window is one run's pass over a chunk's slots. Indexes are into slots;
// settled and marked are positions in the chunk, as last written.
type window struct {
	c     *chunk
	chunk int
	slots []herald.Delivery // slots[i] is at position base+i
	base  int
	sends []send
	back  []bool // the slot's outcome is known
	// settled and marked are the chunk's range as last written; prefix is
	// the index before which every outcome is known; next the index of
	// the next slot to judge.
	settled, marked, prefix, next int
	out                           int // sends on their way
	todo, done                    chan int
	stop                          bool // take on no more slots
	// verify: judge on the devices read now, not as planned (see judge).
	verify bool
	// capRefused: the last write refused a frequency-cap claim, and the
	// slot is being judged again at once (once: a second refusal in a
	// row pauses, as a device that changed does).
	capRefused bool
}

func (w *window) run(ctx context.Context, res *chunkResult) {
	size := w.c.s.cfg.Concurrency
	batch := max(1, size/2)
	for {
		w.collect(res, false)
		w.checkStop(ctx, res)
		room, left := size-(w.next-w.prefix), len(w.slots)-w.next
		switch {
		case !w.stop && left > 0 && room >= min(batch, left):
			w.dispatch(ctx, min(room, left), res)
		case w.out > 0:
			w.collect(res, true)
		default:
			// Recorded even when the job is being cancelled: these were sent.
			if w.base+w.prefix > w.settled {
				final, cancel := afterCancel(ctx, stopSettleFor)
				w.advance(final, w.settle(), res)
				cancel()
			}
			return
		}
	}
}

// checkStop stops taking on slots when the job is cancelled or its run has
// lasted long enough (the rest go in its next run).
func (w *window) checkStop(ctx context.Context, res *chunkResult) {
	switch {
	case w.stop:
	case ctx.Err() != nil:
		w.stop, res.err = true, ctx.Err()
	case w.next > 0 && time.Now().After(w.c.yieldAt):
		w.stop = true
		res.comeBack(0)
	}
}

// dispatch judges the next n slots (fewer when fewer of a spread push's
// are due, or the app's send rate allows fewer now), marks them in flight in one write that also settles what
// came back, and sends those to be sent.
func (w *window) dispatch(ctx context.Context, n int, res *chunkResult) {
	c := w.c
	if !c.authorize(ctx, res) {
		w.stop = true
		return
	}
	if n = c.spread(ctx, w.slots[w.next:w.next+n], res); n == 0 {
		w.stop = true
		return
	}
	if n = c.paced(ctx, n, res); n == 0 {
		w.stop = true
		return
	}
	wave, err := c.judge(ctx, w.slots[w.next:w.next+n], w.verify)
	if err != nil {
		c.unpaced(n)
		res.err, w.stop = err, true
		return
	}
	st := w.settle()
	st.New.Marked = w.marked + n
	for j, sd := range wave {
		if sd.toSend {
			t := sendstore.SlotTarget{Pos: w.base + w.next + j, DeviceID: sd.d.DeviceID, Token: sd.d.Token, CapUser: sd.capUser}
			if c.push.Rule().Personal {
				t.Owner = &wave[j].d.UserID
			}
			if sd.capUser != "" && st.Cap == nil {
				st.Cap = c.capClaim()
			}
			st.Targets = append(st.Targets, t)
		}
	}
	w.advance(ctx, st, res)
	k := max(0, w.marked-(w.base+w.next))
	c.unpaced(n - sendsIn(wave[:k]))
	for j := range k {
		i := w.next + j
		w.sends[i] = wave[j]
		if !wave[j].toSend {
			w.back[i] = true // judged final: nothing to send
			continue
		}
		w.out++
		w.todo <- i // never blocks: at most the window's size are out
	}
	w.next += k
	w.forward()
	refused := k < n && wave[k].capUser != "" && !w.capRefused
	w.capRefused = refused
	switch {
	case k == n || w.stop:
	case !w.verify:
		// A device changed since the fan-out: the rest of the run judges
		// on the devices as they are now.
		w.verify = true
	case refused:
		// The user reached the frequency cap between judge and mark (a
		// push to them was marked meanwhile): judged again at once, it is
		// suppressed.
	default:
		// A device changed between judge and mark: the rest is judged
		// again after a short pause.
		w.stop = true
		res.comeBack(time.Second)
	}
}

// advance writes a step and takes in where the chunk now stands.
func (w *window) advance(ctx context.Context, st sendstore.ChunkStep, res *chunkResult) {
	marked, stopped, err := w.write(ctx, st)
	switch {
	case errors.Is(err, sendstore.ErrChunkMoved):
		res.stopped, w.stop = true, true // another run has the chunk
		return
	case err != nil:
		if res.err == nil {
			res.err = err
		}
		w.stop = true
		return
	}
	w.settled, w.marked = st.New.Settled, marked
	if stopped {
		res.stopped, w.stop = true, true // the push failed
	}
}

// stopSettleFor is how long a run's last write goes on once its job is
// cancelled (a node stopping): what came back is recorded if the store
// takes it by then; a stop during an outage waits no longer for it.
const stopSettleFor = 5 * time.Second

// afterCancel returns a context that outlives ctx's cancellation by d.
func afterCancel(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(d, cancel) })
	return out, func() { stop(); cancel() }
}

// settleRetryFor bounds how long a run keeps trying to write a step the
// store could not take (herald.ErrUnavailable: a restart, a failover, a
// full pool): the sends it settles came back from FCM, and a run given up
// leaves them in flight, to be sent again by the next one. A node that
// stays up through an outage this long resends nothing; the run still
// ends within JobTimeout (SendSlice + settleRetryFor), so no live node's
// job is ever rescued.
const settleRetryFor = 45 * time.Second

// write writes a step, again and again (from 50 ms apart up to a second)
// while the store is unavailable, for at most settleRetryFor, on the
// pacer's clock. A write that failed may still have been applied; when a
// later try finds the chunk moved, the run cannot tell its own write from
// another run's, and gives up with the store's error: the next run
// resumes from what was written.
func (w *window) write(ctx context.Context, st sendstore.ChunkStep) (int, bool, error) {
	store, pace := w.c.s.sends, w.c.s.pace
	marked, stopped, err := store.AdvanceChunk(ctx, w.c.app.ID, w.c.push.ID, st)
	deadline := pace.now().Add(settleRetryFor)
	for wait := 50 * time.Millisecond; errors.Is(err, herald.ErrUnavailable) && pace.now().Add(wait).Before(deadline); wait = min(2*wait, time.Second) {
		if pace.sleep(ctx, wait) != nil {
			return marked, stopped, err
		}
		m, s, e := store.AdvanceChunk(ctx, w.c.app.ID, w.c.push.ID, st)
		if errors.Is(e, sendstore.ErrChunkMoved) {
			return marked, stopped, err
		}
		marked, stopped, err = m, s, e
	}
	return marked, stopped, err
}

// newStep is a step from the chunk's range as last written, moving nothing.
func (w *window) newStep() sendstore.ChunkStep {
	r := sendstore.Range{Settled: w.settled, Marked: w.marked}
	return sendstore.ChunkStep{Chunk: w.chunk, Old: r, New: r, Stream: w.c.stream}
}

// settle is a step that settles the slots from the last written cursor up
// to prefix: a row for each outcome that is not a first send, counts for
// those that are, and a retry chunk for those to be sent again.
func (w *window) settle() sendstore.ChunkStep {
	st := w.newStep()
	st.New.Settled = w.base + w.prefix
	var retry []herald.Delivery
	var wait time.Duration
	for i := w.settled - w.base; i < w.prefix; i++ {
		sd := &w.sends[i]
		d, o := sd.d, sd.out
		switch {
		case o.State == herald.DeliverySent && !d.Resent:
			if d.OldForBadge {
				st.SentOldBadge++
			}
			if d.OldForImage {
				st.SentOldImage++
			}
			if st.Stream != nil && st.Stream.Sent {
				st.Sent = append(st.Sent, d)
			}
			continue
		case o.State == herald.DeliveryRetry:
			d.Error, d.Resent = o.Error, d.Resent || o.CutOff
			if !o.CutOff {
				d.Attempts++
			}
			retry, wait = append(retry, d), max(wait, o.RetryIn)
			continue
		}
		d.State, d.Reason, d.Error, d.Attempts = o.State, o.Reason, o.Error, d.Attempts+1
		st.Rows = append(st.Rows, d)
		if o.Drop {
			st.Drop = append(st.Drop, sendstore.DeadToken{DeviceID: d.DeviceID, Token: d.Token})
		}
	}
	if len(retry) > 0 {
		st.Retry = &sendstore.RetryChunk{Slots: retry, Job: w.c.retryJob(wait)}
	}
	return st
}

// collect takes in the sends that came back, waiting for one when block.
func (w *window) collect(res *chunkResult, block bool) {
	for {
		var i int
		if block {
			i, block = <-w.done, false
		} else {
			select {
			case i = <-w.done:
			default:
				w.forward()
				return
			}
		}
		w.out--
		w.back[i] = true
		sd := &w.sends[i]
		w.c.s.cfg.Observe(string(sd.out.State))
		res.add(sd.out)
		if sd.out.AuthFailure {
			w.stop = true
		}
	}
}

// forward moves prefix past the slots whose outcome is known.
func (w *window) forward() {
	for w.prefix < w.next && w.back[w.prefix] {
		w.prefix++
	}
}

// sendsIn counts the sends of a judged wave.
func sendsIn(wave []send) int {
	n := 0
	for _, sd := range wave {
		if sd.toSend {
			n++
		}
	}
	return n
}
