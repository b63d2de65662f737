package sqlstore

import (
	"cmp"
	"context"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/heraldpush/herald"
)

// RecordEvents records a device's marks (see herald.EventStore). Those
// for pushes sent to the device (see sentTo) are written with the marks
// of the requests queued meanwhile, in one transaction (see eventQueue);
// it returns once that has committed.
func (s *Store) RecordEvents(ctx context.Context, appID, deviceID string, marks []herald.EventMark) ([]bool, error) {
	op := &eventOp{ctx: ctx, recorded: make([]bool, len(marks))}
	sent := map[string]bool{}
	for i, m := range marks {
		ok, seen := sent[m.PushID]
		if !seen {
			var err error
			if ok, err = s.sentTo(ctx, appID, m.PushID, deviceID); err != nil {
				return nil, err
			}
			sent[m.PushID] = ok
		}
		if ok {
			op.rows = append(op.rows, eventRow{pushID: m.PushID, deviceID: deviceID, typ: m.Type, at: m.At, mark: i})
		}
	}
	if len(op.rows) == 0 {
		return op.recorded, nil
	}
	if err := s.events.run(s, op); err != nil {
		return nil, err
	}
	return op.recorded, nil
}

// eventRow is a mark to write, and its place in its request's marks.
type eventRow struct {
	pushID, deviceID string
	typ              herald.EventType
	at               time.Time
	mark             int
}

// eventOp is one request's rows, waiting in the queue.
type eventOp struct {
	ctx      context.Context
	rows     []eventRow
	recorded []bool
	err      error
	// done is closed once err and recorded are final; lead when this
	// op's goroutine is to lead the next batch.
	done, lead chan struct{}
}

// eventQueue writes the rows of requests that queue while a batch is
// being written in one transaction (group commit): a transaction costs
// far more than a row, and devices report in many small requests. The
// first request queued leads: it takes the queue (up to maxEventRows
// rows), writes it, answers each request, and hands the lead to the first
// of those queued meanwhile. No request is answered before the commit
// that holds its rows; when the transaction fails, every request in it
// gets the error (nothing of it was written).
type eventQueue struct {
	mu      sync.Mutex
	queue   []*eventOp
	leading bool
}

// maxEventRows bounds the rows one transaction writes, so that it holds
// the writer no longer than a few milliseconds.
const maxEventRows = 2000

// eventWriteTimeout bounds a batch's transaction; a request's own end
// does not cut the batch that holds others' rows.
const eventWriteTimeout = 10 * time.Second

// run queues op and returns once it has been written, or failed, or its
// context ended while it still waited in the queue.
func (q *eventQueue) run(s *Store, op *eventOp) error {
	op.done, op.lead = make(chan struct{}), make(chan struct{})
	q.mu.Lock()
	q.queue = append(q.queue, op)
	first := !q.leading
	q.leading = true
	q.mu.Unlock()
	if !first {
		select {
		case <-op.done:
			return op.err
		case <-op.lead:
		case <-op.ctx.Done():
			if q.leave(op) {
				return op.ctx.Err()
			}
			select { // taken into a batch, or handed the lead meanwhile
			case <-op.done:
				return op.err
			case <-op.lead:
			}
		}
	}
	q.leadOne(s)
	<-op.done // the leader's op is first in the batch it took
	return op.err
}

// leave takes op out of the queue if it still waits there and was not
// handed the lead.
func (q *eventQueue) leave(op *eventOp) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	select {
	case <-op.lead:
		return false
	default:
	}
	i := slices.Index(q.queue, op)
	if i < 0 {
		return false
	}
	q.queue = slices.Delete(q.queue, i, i+1)
	return true
}

// leadOne writes one batch from the head of the queue and hands the lead
// on.
func (q *eventQueue) leadOne(s *Store) {
	// Requests already running (parsed, about to queue) join the batch if
	// let run first: a commit costs more than many rows. With nothing
	// else to run, this returns at once.
	runtime.Gosched()
	q.mu.Lock()
	n, rows := 0, 0
	for n < len(q.queue) && (n == 0 || rows+len(q.queue[n].rows) <= maxEventRows) {
		rows += len(q.queue[n].rows)
		n++
	}
	ops := slices.Clone(q.queue[:n])
	q.queue = slices.Delete(q.queue, 0, n)
	q.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.WithoutCancel(ops[0].ctx), eventWriteTimeout)
	err := s.writeEvents(ctx, ops)
	cancel()
	for _, op := range ops {
		op.err = err
		close(op.done)
	}

	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) > 0 {
		close(q.queue[0].lead)
	} else {
		q.leading = false
	}
}

// eventRef names a row of a batch: its op and its place in op.rows.
type eventRef struct{ op, row int }

// writeEvents writes a batch's rows, each (push, device, type) once, and
// raises the counts of the pushes by the rows that were new; it sets
// each op's recorded marks once the transaction committed. Rows are
// written in key order, so that two nodes writing at once take their
// locks in the same order.
func (s *Store) writeEvents(ctx context.Context, ops []*eventOp) error {
	var refs []eventRef
	for i, op := range ops {
		for j := range op.rows {
			refs = append(refs, eventRef{i, j})
		}
	}
	row := func(r eventRef) eventRow { return ops[r.op].rows[r.row] }
	slices.SortStableFunc(refs, func(a, b eventRef) int {
		x, y := row(a), row(b)
		return cmp.Or(cmp.Compare(x.pushID, y.pushID), cmp.Compare(x.deviceID, y.deviceID), cmp.Compare(x.typ, y.typ))
	})
	// The first of equal rows (the earliest asked) is written; the
	// others are repeats.
	var write []eventRef
	args := make([][]any, 0, len(refs))
	for i, r := range refs {
		x := row(r)
		if i > 0 {
			if p := row(refs[i-1]); p.pushID == x.pushID && p.deviceID == x.deviceID && p.typ == x.typ {
				continue
			}
		}
		write = append(write, r)
		args = append(args, []any{x.pushID, x.deviceID, x.typ, x.at.UnixMilli(), x.pushID})
	}
	var written []int64
	err := s.inTx(ctx, func(c conn) error {
		var err error
		written, err = c.execMany(ctx, `INSERT INTO push_events (push_id, device_id, type, at)
			SELECT ?, ?, ?, CAST(? AS BIGINT) WHERE EXISTS (SELECT 1 FROM pushes WHERE id = ?)
			ON CONFLICT (push_id, device_id, type) DO NOTHING`, args)
		if err != nil {
			return err
		}
		return raiseEventCounts(ctx, c, write, written, row)
	})
	if err != nil {
		return err
	}
	for i, r := range write {
		if written[i] > 0 {
			ops[r.op].recorded[row(r).mark] = true
		}
	}
	return nil
}

// raiseEventCounts adds the new rows (written, in the order of refs,
// which is by push) to their pushes' counts, one update per push.
func raiseEventCounts(ctx context.Context, c conn, refs []eventRef, written []int64, row func(eventRef) eventRow) error {
	var args [][]any
	for i, r := range refs {
		if written[i] == 0 {
			continue
		}
		x := row(r)
		if len(args) == 0 || args[len(args)-1][2] != x.pushID {
			args = append(args, []any{0, 0, x.pushID})
		}
		last := args[len(args)-1]
		if x.typ == herald.EventOpened {
			last[1] = last[1].(int) + 1
		} else {
			last[0] = last[0].(int) + 1
		}
	}
	_, err := c.execMany(ctx, `UPDATE pushes SET events_received = events_received + ?, events_opened = events_opened + ?
		WHERE id = ?`, args)
	return err
}

// fillEventCounts sets the counts devices reported for a push.
func fillEventCounts(ctx context.Context, c conn, p *herald.Push) error {
	return c.queryRow(ctx, `SELECT events_received, events_opened FROM pushes WHERE id = ?`, p.ID).
		Scan(&p.Counts.Received, &p.Counts.Opened)
}
