package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
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
func (s *Store) ResumeChunk(ctx context.Context, pushID string, chunk int) (sendstore.ChunkWork, error) {
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

// AdvanceChunk writes one step of a chunk's progress: the targets' devices
// are checked in the same transaction, then the cursor and the in-flight
// end move together in one guarded write, the rows are written (only
// outcomes that are not a first send) and the retry chunk is made.
func (s *Store) AdvanceChunk(ctx context.Context, appID, pushID string, st sendstore.ChunkStep) (int, bool, error) {
	retry := 0
	if st.Retry != nil {
		retry = len(st.Retry.Slots)
	}
	sent := st.New.Settled - st.Old.Settled - len(st.Rows) - retry
	if st.New.Settled < st.Old.Settled || st.New.Settled > st.Old.Marked || st.New.Marked < st.Old.Marked || sent < 0 ||
		len(st.Targets) > st.New.Marked-st.Old.Marked {
		return 0, false, fmt.Errorf("sqlstore: chunk step out of range: %+v to %+v, %d rows, %d retried, %d targets",
			st.Old, st.New, len(st.Rows), retry, len(st.Targets))
	}
	var marked int
	var stopped, ready, pending bool
	err := s.inBulkTx(ctx, func(c conn) error {
		ready = false
		end, err := markable(ctx, c, appID, st)
		if err != nil {
			return err
		}
		// A retry chunk's number is taken first: the push's row is locked
		// before its chunk's, in the order FailPush locks them.
		retryChunk := 0
		if st.Retry != nil {
			if retryChunk, err = nextRetryChunk(ctx, c, pushID); err != nil {
				return err
			}
		}
		err = c.queryRow(ctx, `UPDATE push_chunks SET settled = ?, marked = CASE WHEN failed THEN marked ELSE ? END, sent = sent + ?,
			sent_old_badge = sent_old_badge + ?, sent_old_image = sent_old_image + ?, moved_at = ?
			WHERE push_id = ? AND chunk = ? AND settled = ? AND marked = ? RETURNING marked, failed, pending_events`,
			st.New.Settled, end, sent, st.SentOldBadge, st.SentOldImage, s.Now().UnixMilli(), pushID, st.Chunk, st.Old.Settled,
			st.Old.Marked).Scan(&marked, &stopped, &pending)
		if errors.Is(err, herald.ErrNotFound) {
			return sendstore.ErrChunkMoved
		} else if err != nil {
			return err
		}
		rows := st.Rows
		switch {
		case st.Retry == nil:
		case stopped || retryChunk == 0:
			stopped, rows, retryChunk = true, append(slices.Clip(rows), failedSlots(st.Retry.Slots)...), 0
		default:
			if err := insertRetryChunk(ctx, c, pushID, retryChunk, st.Retry); err != nil {
				return err
			}
		}
		if err := insertDeliveries(ctx, c, pushID, rows); err != nil {
			return err
		}
		if pending && st.New.Settled > st.Old.Settled {
			if ready, err = settlePending(ctx, c, pushID, st, rows, retryChunk); err != nil {
				return err
			}
		}
		return dropDevices(ctx, c, appID, st.Drop)
	})
	if err == nil && ready {
		// Counted on the push's row in a transaction of their own, which
		// takes it before any chunk's; the push's finish counts those a
		// failure here leaves ready.
		_ = s.promotePending(ctx, pushID)
	}
	return marked, stopped, err
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

// insertRetryChunk records retry chunk number chunk: its slots and its job.
func insertRetryChunk(ctx context.Context, c conn, pushID string, chunk int, r *sendstore.RetryChunk) error {
	slots := slices.Clone(r.Slots)
	for i := range slots {
		slots[i].Chunk = chunk
	}
	if _, err := c.exec(ctx, `INSERT INTO push_chunks (push_id, chunk, size, slots) VALUES (?, ?, ?, ?)`,
		pushID, chunk, len(slots), encodeSlots(slots)); err != nil {
		return err
	}
	_, err := c.insertJobs(ctx, []herald.Job{r.Job(chunk)})
	return err
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

// markable returns where a step's in-flight range may end: at
// st.New.Marked, or at the first target whose device no longer holds its
// token (or is no longer mapped to its owner). This is the one guard that
// a device is sent only the token it holds, for the user it belongs to.
func markable(ctx context.Context, c conn, appID string, st sendstore.ChunkStep) (int, error) {
	if len(st.Targets) == 0 {
		return st.New.Marked, nil
	}
	ids := make([]string, 0, len(st.Targets))
	for _, t := range st.Targets {
		ids = append(ids, t.DeviceID)
	}
	type holding struct {
		token string
		user  *string
	}
	now := make(map[string]holding, len(ids))
	err := c.lookup(ctx, HeldTokensLookup, appID, ids,
		func(row scanner) error {
			var id string
			var h holding
			err := row.Scan(&id, &h.token, &h.user)
			now[id] = h
			return err
		})
	if err != nil {
		return 0, err
	}
	for _, t := range st.Targets {
		h, ok := now[t.DeviceID]
		if !ok || h.token != t.Token || t.Owner != nil && (h.user == nil || *h.user != *t.Owner) {
			return t.Pos, nil
		}
	}
	return st.New.Marked, nil
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
func (s *Store) Deliveries(ctx context.Context, pushID string) ([]herald.Delivery, error) {
	rows, err := s.rows(ctx, `push_id = ?`, pushID)
	if err != nil {
		return nil, err
	}
	return s.withSlots(ctx, pushID, `push_id = ?`, rows, nil)
}

// DeliveriesOf returns the deliveries of a push to the users, by seq. The
// chunks are read one at a time, so a push of a million tokens is never
// in memory at once.
func (s *Store) DeliveriesOf(ctx context.Context, pushID string, userIDs []string) ([]herald.Delivery, error) {
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
	return s.withSlots(ctx, pushID, `push_id = ?`, rows, func(d herald.Delivery) bool { return users[d.UserID] })
}

// UndeliverableUsers returns the users with an undeliverable delivery of
// the push, each once. Such outcomes are always rows.
func (s *Store) UndeliverableUsers(ctx context.Context, pushID string) ([]string, error) {
	var out []string
	err := s.reader().each(ctx, func(row scanner) error {
		var u string
		err := row.Scan(&u)
		out = append(out, u)
		return err
	}, `SELECT DISTINCT user_id FROM deliveries WHERE push_id = ? AND state = ? AND user_id <> '' ORDER BY user_id`, pushID, herald.DeliveryUndeliverable)
	return out, err
}

// withSlots returns rows and the slots without a row of the push's chunks
// where holds (those keep says to, all with keep nil), by seq.
func (s *Store) withSlots(ctx context.Context, pushID, where string, rows []herald.Delivery, keep func(herald.Delivery) bool) ([]herald.Delivery, error) {
	slots, err := s.slotDeliveries(ctx, pushID, where, rows, keep)
	if err != nil {
		return nil, err
	}
	out := append(rows, slots...)
	slices.SortFunc(out, bySeq)
	return out, nil
}

// slotDeliveries returns the slots without a row of the push's chunks
// where holds (those keep says to, all with keep nil), each in the state
// its position gives it: sent before the cursor; failed from there on
// when the push failed, with its reason; in flight up to the range's end;
// pending after it. A slot settled into a retry chunk is that chunk's:
// retry chunks are read first, newest (lowest number) first, and a slot
// met again in an older chunk is skipped. Each chunk is decoded as it is
// read.
func (s *Store) slotDeliveries(ctx context.Context, pushID, where string, rows []herald.Delivery, keep func(herald.Delivery) bool) ([]herald.Delivery, error) {
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
		c, err := scanChunk(row)
		if err != nil {
			return err
		}
		slots, err := c.decode()
		if err != nil {
			return err
		}
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
				d.State, d.Attempts = herald.DeliverySent, d.Attempts+1
			case c.failed:
				d.State, d.Error = herald.DeliveryFailed, reason
			case i < c.marked:
				d.State = herald.DeliveryInflight
			}
			out = append(out, d)
		}
		return nil
	}, `SELECT `+chunkColumns+` FROM push_chunks WHERE `+where+` ORDER BY chunk`, pushID)
	return out, err
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
