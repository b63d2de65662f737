package delivery

import (
	"context"
	"errors"
	"time"

	"github.com/heraldpush/herald"
)

// sendSlots sends the chunk's pending slots through a sliding window: at
// most Concurrency slots lie between the first one whose send has not come
// back and the last one marked in flight. Slots are judged and marked in
// batches as the window makes room, each batch one write that also
// settles the sends that came back since the last, in order; sends go out
// as soon as they are marked, so none waits for the slowest of a wave.
// Only outcomes other than sent are written as rows. A crash can thus
// resend only the window (the slots marked and not yet settled), and
// those are recorded as resent.
func (c *chunk) sendSlots(ctx context.Context, chunkNo int, work herald.ChunkWork, res *chunkResult) {
	if len(work.Pending) == 0 {
		return
	}
	size := c.s.cfg.Concurrency
	w := &window{c: c, chunk: chunkNo, slots: work.Pending, base: work.Settled, settled: work.Settled, marked: work.Settled,
		sends: make([]send, len(work.Pending)), back: make([]bool, len(work.Pending)),
		todo: make(chan int, size), done: make(chan int, size)}
	// The window's senders live as long as the run: a goroutine per send
	// would grow a fresh stack through the HTTP/2 client every time.
	for range min(size, len(work.Pending)) {
		go func() {
			for i := range w.todo {
				c.sendOne(ctx, &w.sends[i])
				w.done <- i
			}
		}()
	}
	defer close(w.todo)
	w.run(ctx, res)
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
	// settled and marked are the chunk's cursor and in-flight end as last
	// written; prefix is the index before which every outcome is known;
	// next the index of the next slot to judge.
	settled, marked, prefix, next int
	out                           int // sends on their way
	todo, done                    chan int
	stop                          bool
	// verify: judge on the devices read now, not as planned (see judge).
	verify bool
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
				w.advance(context.WithoutCancel(ctx), w.step(), res)
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
		w.stop, res.more = true, true
	}
}

// dispatch judges the next n slots (fewer when the app's send rate allows
// fewer now), marks them in flight in one write that also settles what
// came back, and sends those to be sent.
func (w *window) dispatch(ctx context.Context, n int, res *chunkResult) {
	c := w.c
	if !c.authorize(ctx, res) {
		w.stop = true
		return
	}
	if n = c.paced(ctx, n, res); n == 0 {
		w.stop = true
		return
	}
	wave, err := c.judge(ctx, w.slots[w.next:w.next+n], w.verify)
	if err != nil || wave == nil {
		c.unpaced(n)
		res.err, res.stopped, w.stop = err, err == nil, true
		return
	}
	st := w.step()
	st.Mark = n
	for j, sd := range wave {
		if sd.toSend {
			t := herald.SlotTarget{Pos: w.base + w.next + j, SendTarget: herald.SendTarget{Seq: sd.d.Seq, DeviceID: sd.d.DeviceID, Token: sd.d.Token}}
			if !c.push.Targeted() {
				t.Owner = &wave[j].d.UserID
			}
			st.Targets = append(st.Targets, t)
		}
	}
	if !w.advance(ctx, st, res) {
		c.unpaced(n)
		return
	}
	k := w.marked - (w.base + w.next)
	c.unpaced(n - sendsIn(wave[:k]))
	for j := range k {
		i := w.next + j
		w.sends[i] = wave[j]
		if !wave[j].toSend {
			w.back[i] = true // judged final: nothing to send
			continue
		}
		w.sends[i].marked = true
		w.out++
		w.todo <- i // never blocks: at most the window's size are out
	}
	w.next += k
	w.forward()
	switch {
	case k == n:
	case !w.verify:
		// A device changed since the fan-out: the rest of the run judges
		// on the devices as they are now.
		w.verify = true
	default:
		// A device changed between judge and mark: the rest is judged
		// again after a short pause.
		res.retryIn, w.stop = max(res.retryIn, time.Second), true
	}
}

// advance writes a step and takes in where the chunk now stands.
func (w *window) advance(ctx context.Context, st herald.ChunkStep, res *chunkResult) bool {
	marked, err := w.c.s.cfg.Store.AdvanceChunk(ctx, w.c.app.ID, w.c.push.ID, st)
	switch {
	case errors.Is(err, herald.ErrChunkMoved):
		res.stopped, w.stop = true, true // another run has the chunk
		return false
	case err != nil:
		if res.err == nil {
			res.err = err
		}
		w.stop = true
		return false
	}
	w.settled, w.marked = st.Settle, marked
	return true
}

// step settles the slots from the last written cursor up to prefix: rows
// for the outcomes other than sent, counts for those sent.
func (w *window) step() herald.ChunkStep {
	st := herald.ChunkStep{Chunk: w.chunk, Settled: w.settled, Marked: w.marked, Settle: w.base + w.prefix}
	for i := w.settled - w.base; i < w.prefix; i++ {
		sd := &w.sends[i]
		o := sd.outcome
		if o.State == herald.DeliverySent {
			if sd.d.OldForBadge {
				st.SentOldBadge++
			}
			if sd.d.OldForImage {
				st.SentOldImage++
			}
			continue
		}
		d := sd.d
		d.DeviceID, d.Token, d.State, d.Reason, d.Error, d.Attempts = o.DeviceID, o.Token, o.State, o.Reason, o.Error, 1
		st.Rows = append(st.Rows, d)
		if o.DropDevice {
			st.Drop = append(st.Drop, o)
		}
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
		w.c.s.cfg.Observe(string(sd.outcome.State))
		res.add(sd)
		if sd.authFailure != "" {
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
