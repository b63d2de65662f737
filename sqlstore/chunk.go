package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// storedChunk is a row of push_chunks: a chunk's slots and where its
// sends stand (see sendstore.ChunkWork).
type storedChunk struct {
	chunk, size, settled, marked int
	failed                       bool
	slots                        []byte
}

const chunkColumns = `chunk, size, settled, marked, failed, slots`

// scanChunk scans chunkColumns and then more, the columns the query
// reads after them.
func scanChunk(row scanner, more ...any) (storedChunk, error) {
	var c storedChunk
	err := row.Scan(append([]any{&c.chunk, &c.size, &c.settled, &c.marked, &c.failed, &c.slots}, more...)...)
	return c, err
}

// decode returns the chunk's slots, checked against its counters.
func (c storedChunk) decode() ([]herald.Delivery, error) {
	ds, err := decodeSlots(c.slots, c.chunk)
	if err == nil && (len(ds) != c.size || c.settled > c.marked || c.marked > c.size) {
		err = errSlots
	}
	if err != nil {
		return nil, fmt.Errorf("chunk %d: %w", c.chunk, err)
	}
	return ds, nil
}

// ResumeChunk returns the chunk's work. It writes nothing: a run that
// finds slots in flight settles them into a retry chunk with its first
// step, guarded like any other.
func (s *PushStore) ResumeChunk(ctx context.Context, pushID string, chunk int) (sendstore.ChunkWork, error) {
	var moved sql.NullInt64
	c, err := scanChunk(s.reader().queryRow(ctx, `SELECT `+chunkColumns+`, moved_at FROM push_chunks WHERE push_id = ? AND chunk = ?`,
		pushID, chunk), &moved)
	if errors.Is(err, herald.ErrNotFound) {
		return sendstore.ChunkWork{}, nil
	} else if err != nil {
		return sendstore.ChunkWork{}, err
	}
	slots, err := c.decode()
	if err != nil {
		return sendstore.ChunkWork{}, err
	}
	w := sendstore.ChunkWork{Range: sendstore.Range{Settled: c.settled, Marked: c.marked}, Stopped: c.failed}
	if moved.Valid {
		w.MovedAt = time.UnixMilli(moved.Int64).UTC()
	}
	if !c.failed {
		w.Slots = slots[c.settled:]
	}
	return w, nil
}

// AdvanceChunk writes one step of a chunk's progress: it loads the chunk
// and the step's facts, applies the step (sendstore.Chunk.Apply) and
// persists the new range in a write guarded by the state it loaded (a
// transaction that lost a race runs again on the new one), with the rows,
// the retry chunk and the dropped devices.
func (s *PushStore) AdvanceChunk(ctx context.Context, appID, pushID string, st sendstore.ChunkStep) (int, bool, error) {
	if err := st.Check(); err != nil {
		return 0, false, err // refused before anything is read
	}
	var next sendstore.Chunk
	var ready bool
	err := s.inBulkTx(ctx, func(c conn) error {
		ready = false
		now := s.Now()
		f, err := stepFacts(ctx, c, appID, pushID, st)
		if err != nil {
			return err
		}
		// The chunk is first taken to be where the worker left it, which
		// it nearly always is: the guarded write confirms it without a
		// read. Only when the write misses is the chunk read, and the step
		// judged on what it is.
		cur := sendstore.Chunk{Range: st.Old}
		var e sendstore.Effects
		var pending bool
		for loaded := false; ; loaded = true {
			if next, e, err = cur.Apply(st, f); err != nil {
				return err
			}
			err = c.queryRow(ctx, `UPDATE push_chunks SET settled = ?, marked = ?, sent = sent + ?,
				sent_old_badge = sent_old_badge + ?, sent_old_image = sent_old_image + ?, moved_at = ?, settle_log = settle_log || ?
				WHERE push_id = ? AND chunk = ? AND settled = ? AND marked = ? AND failed = ? RETURNING pending_events`,
				next.Settled, next.Marked, e.Sent, e.SentOldBadge, e.SentOldImage, now.UnixMilli(), settleEntry(cur, next, now),
				pushID, st.Chunk, cur.Settled, cur.Marked, cur.Stopped).Scan(&pending)
			switch {
			case errors.Is(err, herald.ErrNotFound) && loaded:
				return errConflict // moved since it was read: judged again on what it is now
			case errors.Is(err, herald.ErrNotFound):
				if cur, err = loadChunk(ctx, c, pushID, st.Chunk); err != nil {
					return err
				}
				continue
			case err != nil:
				return err
			}
			break
		}
		retryChunk := 0
		if e.Retry != nil {
			retryChunk = e.Retry.Chunk
			if err := s.insertRetryChunk(ctx, c, pushID, e.Retry); err != nil {
				return err
			}
		}
		if err := insertDeliveries(ctx, c, pushID, now, e.Rows); err != nil {
			return err
		}
		if len(e.Events) > 0 {
			now := s.Now()
			for i := range e.Events {
				e.Events[i].AppID, e.Events[i].PushID, e.Events[i].At = appID, pushID, now
			}
			if err := queueEvents(ctx, c, e.Events, now); err != nil {
				return err
			}
		}
		if pending && st.New.Settled > st.Old.Settled {
			if ready, err = settlePending(ctx, c, pushID, st, e.Rows, retryChunk); err != nil {
				return err
			}
		}
		return dropDevices(ctx, c, appID, e.Drop)
	})
	if err == nil && ready {
		// Counted on the push's row in a transaction of their own, which
		// takes it before any chunk's; the push's finish counts those a
		// failure here leaves ready.
		_ = s.promotePending(ctx, pushID)
	}
	if err != nil {
		return 0, false, err
	}
	return next.Marked, next.Stopped, nil
}

// loadChunk returns a chunk's range and whether it stopped (its push
// failed); ErrChunkMoved for a chunk never recorded.
func loadChunk(ctx context.Context, c conn, pushID string, chunk int) (sendstore.Chunk, error) {
	var ch sendstore.Chunk
	err := c.queryRow(ctx, `SELECT settled, marked, failed FROM push_chunks WHERE push_id = ? AND chunk = ?`, pushID, chunk).
		Scan(&ch.Settled, &ch.Marked, &ch.Stopped)
	if errors.Is(err, herald.ErrNotFound) {
		return ch, sendstore.ErrChunkMoved
	}
	return ch, err
}

// stepFacts loads what a step depends on besides its chunk: its targets'
// devices, the users refused a receipt of a capped push (claimReceipts,
// whose claims the transaction keeps only when the step applies) and, for
// a step with a retry chunk, the chunk's number. The
// number is taken first, on the push's row, which is locked before its
// chunk's in the order FailPush locks them; it is given back with the
// transaction when the step does not apply.
func stepFacts(ctx context.Context, c conn, appID, pushID string, st sendstore.ChunkStep) (sendstore.Facts, error) {
	var f sendstore.Facts
	var err error
	if st.Retry != nil {
		if f.RetryChunk, err = nextRetryChunk(ctx, c, pushID); err != nil {
			return f, err
		}
	}
	if len(st.Targets) == 0 {
		return f, nil
	}
	if f.Capped, err = claimReceipts(ctx, c, appID, pushID, st); err != nil {
		return f, err
	}
	ids := make([]string, 0, len(st.Targets))
	for _, t := range st.Targets {
		ids = append(ids, t.DeviceID)
	}
	f.Devices = make(map[string]sendstore.Holding, len(ids))
	err = c.lookup(ctx, HeldTokensLookup, appID, ids,
		func(row scanner) error {
			var id string
			var h sendstore.Holding
			err := row.Scan(&id, &h.Token, &h.User)
			f.Devices[id] = h
			return err
		})
	return f, err
}

// nextRetryChunk takes the number of a push's next retry chunk, counting
// down from -1 below the fan-out's chunks, and counts it among the chunks
// the push waits for before its finish; 0 when the push is no longer
// sending (it failed).
func nextRetryChunk(ctx context.Context, c conn, pushID string) (int, error) {
	var n int
	err := c.queryRow(ctx, `UPDATE pushes SET retry_chunks = retry_chunks + 1, open_chunks = open_chunks + 1
		WHERE id = ? AND status = 'sending' RETURNING retry_chunks`, pushID).Scan(&n)
	if errors.Is(err, herald.ErrNotFound) {
		return 0, nil
	}
	return -n, err
}

// insertRetryChunk records a retry chunk: its slots, its users and its
// job.
func (s *PushStore) insertRetryChunk(ctx context.Context, c conn, pushID string, r *sendstore.NumberedChunk) error {
	if err := s.insertChunks(ctx, c, pushID, map[int][]herald.Delivery{r.Chunk: r.Slots}); err != nil {
		return err
	}
	_, err := c.insertJobs(ctx, []herald.Job{r.Job})
	return err
}

// dropDevices deletes the devices of dead tokens, each only while it still
// holds the token found dead.
func dropDevices(ctx context.Context, c conn, appID string, dead []sendstore.DeadToken) error {
	args := make([][]any, len(dead))
	for i, o := range dead {
		args[i] = []any{appID, o.DeviceID, o.Token}
	}
	_, err := c.execMany(ctx, `DELETE FROM devices WHERE app_id = ? AND device_id = ? AND token = ?`, args)
	return err
}

// Deliveries returns every delivery of a push: its rows, and each slot
// without one in the state its chunk's cursor and range give it.
func (s *PushStore) Deliveries(ctx context.Context, pushID string) ([]herald.Delivery, error) {
	rows, err := s.rows(ctx, `push_id = ?`, pushID)
	if err != nil {
		return nil, err
	}
	return s.withSlots(ctx, pushID, `push_id = ?`, nil, rows, nil)
}

// DeliveriesOf returns the deliveries of a push to the users, by seq. The
// chunks are read one at a time, so a push of a million tokens is never
// in memory at once.
func (s *PushStore) DeliveriesOf(ctx context.Context, pushID string, userIDs []string) ([]herald.Delivery, error) {
	var rows []herald.Delivery
	err := eachIn(ctx, s.reader(), `SELECT `+deliveryColumns+` FROM deliveries WHERE push_id = ? AND user_id IN `, pushID, userIDs,
		func(row scanner) error {
			d, err := scanDelivery(row)
			rows = append(rows, d)
			return err
		})
	if err != nil || len(userIDs) == 0 {
		return nil, err
	}
	users := make(map[string]bool, len(userIDs))
	for _, u := range userIDs {
		users[u] = true
	}
	return s.withSlots(ctx, pushID, `push_id = ?`, nil, rows, func(d herald.Delivery) bool { return users[d.UserID] })
}

// UndeliverableUsers returns the users with an undeliverable delivery of
// the push, each once. Such outcomes are always rows.
func (s *PushStore) UndeliverableUsers(ctx context.Context, pushID string) ([]string, error) {
	return s.userIDs(ctx, `SELECT DISTINCT user_id FROM deliveries WHERE push_id = ? AND state = ? AND user_id <> '' ORDER BY user_id`,
		pushID, herald.DeliveryUndeliverable)
}

// userIDs returns the one column of the rows query reads, in order.
func (s *PushStore) userIDs(ctx context.Context, query string, args ...any) ([]string, error) {
	var out []string
	err := s.reader().each(ctx, func(row scanner) error {
		var u string
		err := row.Scan(&u)
		out = append(out, u)
		return err
	}, query, args...)
	return out, err
}

// withSlots returns rows and the slots without a row of the push's chunks
// where holds (on the push's id and then more) (those keep says to, all with keep nil), by seq.
func (s *PushStore) withSlots(ctx context.Context, pushID, where string, more []any, rows []herald.Delivery, keep func(herald.Delivery) bool) ([]herald.Delivery, error) {
	slots, err := s.slotDeliveries(ctx, pushID, where, more, rows, keep)
	if err != nil {
		return nil, err
	}
	out := append(rows, slots...)
	slices.SortFunc(out, bySeq)
	return out, nil
}

// slotDeliveries returns the slots without a row of the push's chunks
// where holds, on the push's id and then more (those keep says to, all
// with keep nil), each in the state its position gives it: sent before
// the cursor; failed from there on when the push failed, with its
// reason; in flight up to the range's end; pending after it. A slot
// settled into a retry chunk is that chunk's: retry chunks are read
// first, newest (lowest number) first, and a slot met again in an older
// chunk is skipped. Each chunk is decoded as it is read.
func (s *PushStore) slotDeliveries(ctx context.Context, pushID, where string, more []any, rows []herald.Delivery, keep func(herald.Delivery) bool) ([]herald.Delivery, error) {
	var reason string
	if err := s.reader().queryRow(ctx, `SELECT failure_reason FROM pushes WHERE id = ?`, pushID).Scan(&reason); err != nil {
		if errors.Is(err, herald.ErrNotFound) {
			return nil, nil
		}
		return nil, err
	}
	seen := make(map[int]bool, len(rows)) // rows, and the slots of retry chunks
	for _, d := range rows {
		seen[d.Seq] = true
	}
	var out []herald.Delivery
	err := s.reader().each(ctx, func(row scanner) error {
		var log string
		c, err := scanChunk(row, &log)
		if err != nil {
			return err
		}
		slots, err := c.decode()
		if err != nil {
			return err
		}
		settles := parseSettleLog(log)
		for i, d := range slots {
			if seen[d.Seq] {
				continue
			}
			if c.chunk < 0 {
				seen[d.Seq] = true
			}
			if keep != nil && !keep(d) {
				continue
			}
			switch {
			case i < c.settled:
				d.State, d.Attempts, d.SentAt = herald.DeliverySent, d.Attempts+1, settles.at(i)
			case c.failed:
				d.State, d.Error = herald.DeliveryFailed, reason
			case i < c.marked:
				d.State = herald.DeliveryInflight
			}
			out = append(out, d)
		}
		return nil
	}, `SELECT `+chunkColumns+`, settle_log FROM push_chunks WHERE `+where+` ORDER BY chunk`, append([]any{pushID}, more...)...)
	return out, err
}

// A chunk's settle log says when its slots were settled: an entry
// "from:to:ms;" for each step that moved its cursor from from to to, at
// ms. Slots settled before Herald kept it have no entry.

// settleEntry is the settle log's entry of a step from cur to next at
// now; "" when the cursor did not move.
func settleEntry(cur, next sendstore.Chunk, now time.Time) string {
	if next.Settled <= cur.Settled {
		return ""
	}
	return strconv.Itoa(cur.Settled) + ":" + strconv.Itoa(next.Settled) + ":" + strconv.FormatInt(now.UnixMilli(), 10) + ";"
}

// settleStep is an entry of a settle log.
type settleStep struct {
	from, to int
	at       time.Time
}

type settleSteps []settleStep

// parseSettleLog reads a settle log; an entry it cannot read is skipped
// (its slots have no time).
func parseSettleLog(log string) settleSteps {
	var out settleSteps
	for entry := range strings.SplitSeq(log, ";") {
		f := strings.Split(entry, ":")
		if len(f) != 3 {
			continue
		}
		from, err1 := strconv.Atoi(f[0])
		to, err2 := strconv.Atoi(f[1])
		ms, err3 := strconv.ParseInt(f[2], 10, 64)
		if err1 == nil && err2 == nil && err3 == nil {
			out = append(out, settleStep{from, to, time.UnixMilli(ms).UTC()})
		}
	}
	return out
}

// at returns when the slot at pos was settled; zero when the log does
// not say.
func (l settleSteps) at(pos int) time.Time {
	for _, st := range l {
		if st.from <= pos && pos < st.to {
			return st.at
		}
	}
	return time.Time{}
}

// eachIn runs query, which ends in "IN ", with the list of values
// (paddedIn), lookupBatch values a statement.
func eachIn(ctx context.Context, c conn, query, first string, values []string, scan func(scanner) error) error {
	for start := 0; start < len(values); start += lookupBatch {
		list, args := paddedIn(first, values[start:min(start+lookupBatch, len(values))])
		if err := c.each(ctx, scan, query+list, args...); err != nil {
			return err
		}
	}
	return nil
}
