package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

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

func scanChunk(row scanner) (storedChunk, error) {
	var c storedChunk
	err := row.Scan(&c.chunk, &c.size, &c.settled, &c.marked, &c.failed, &c.slots)
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

// ResumeChunk returns the chunk's work, first turning the slots a run left
// in flight into open rows (see recoverInflight).
func (s *Store) ResumeChunk(ctx context.Context, pushID string, chunk int) (sendstore.ChunkWork, error) {
	for attempt := 1; ; attempt++ {
		c, err := scanChunk(s.reader().queryRow(ctx, `SELECT `+chunkColumns+` FROM push_chunks WHERE push_id = ? AND chunk = ?`,
			pushID, chunk))
		if errors.Is(err, herald.ErrNotFound) {
			return sendstore.ChunkWork{}, nil
		} else if err != nil {
			return sendstore.ChunkWork{}, err
		}
		slots, err := c.decode()
		if err != nil {
			return sendstore.ChunkWork{}, err
		}
		if c.marked > c.settled && !c.failed {
			err := s.inBulkTx(ctx, func(tx conn) error { return recoverInflight(ctx, tx, pushID, c, slots) })
			if errors.Is(err, errConflict) && attempt < txAttempts {
				continue // another run moved the chunk on meanwhile: read it again
			} else if err != nil {
				return sendstore.ChunkWork{}, err
			}
			c.settled = c.marked
		}
		open, err := s.rows(ctx, `push_id = ? AND chunk = ? AND state IN (`+inList(herald.OpenDeliveryStates)+`)`, pushID, chunk)
		if err != nil {
			return sendstore.ChunkWork{}, err
		}
		w := sendstore.ChunkWork{Settled: c.settled, Open: open}
		if !c.failed {
			w.Pending = slots[c.settled:]
		}
		return w, nil
	}
}

// recoverInflight settles the slots a run marked in flight and never
// settled (it died, or another run took the chunk over) as open rows in
// flight: the next send of each marks it resent. The cursor moves past
// them only if it is still where it was read.
func recoverInflight(ctx context.Context, c conn, pushID string, ch storedChunk, slots []herald.Delivery) error {
	if err := guard(c.exec(ctx, `UPDATE push_chunks SET settled = marked WHERE push_id = ? AND chunk = ? AND settled = ? AND marked = ?`,
		pushID, ch.chunk, ch.settled, ch.marked)); err != nil {
		return err
	}
	inflight := slices.Clone(slots[ch.settled:ch.marked])
	for i := range inflight {
		inflight[i].State = herald.DeliveryInflight
	}
	return insertDeliveries(ctx, c, pushID, inflight, true)
}

// AdvanceChunk writes one step of a chunk's progress: the targets' devices
// are checked in the same transaction (the guard MarkInflight puts on each
// row), then the cursor and the in-flight end move together in one guarded
// write, and only the outcomes other than sent are written as rows.
func (s *Store) AdvanceChunk(ctx context.Context, appID, pushID string, st sendstore.ChunkStep) (int, error) {
	if st.Settle < st.Settled || st.Settle > st.Marked || st.Mark < 0 || len(st.Targets) > st.Mark {
		return 0, fmt.Errorf("sqlstore: chunk step out of range: %d..%d settled to %d, %d marked", st.Settled, st.Marked, st.Settle, st.Mark)
	}
	var marked int
	err := s.inBulkTx(ctx, func(c conn) error {
		mark, err := markable(ctx, c, appID, st)
		if err != nil {
			return err
		}
		err = c.queryRow(ctx, `UPDATE push_chunks SET settled = ?, marked = CASE WHEN failed THEN marked ELSE ? END,
			sent_old_badge = sent_old_badge + ?, sent_old_image = sent_old_image + ?
			WHERE push_id = ? AND chunk = ? AND settled = ? AND marked = ? RETURNING marked`,
			st.Settle, st.Marked+mark, st.SentOldBadge, st.SentOldImage, pushID, st.Chunk, st.Settled, st.Marked).Scan(&marked)
		if errors.Is(err, herald.ErrNotFound) {
			return sendstore.ErrChunkMoved
		} else if err != nil {
			return err
		}
		if err := insertDeliveries(ctx, c, pushID, st.Rows, true); err != nil {
			return err
		}
		return dropDevices(ctx, c, appID, st.Drop)
	})
	return marked, err
}

// markable returns how many of a step's slots may be marked: all, or those
// before the first target whose device no longer holds its token (or is no
// longer mapped to its owner).
func markable(ctx context.Context, c conn, appID string, st sendstore.ChunkStep) (int, error) {
	if len(st.Targets) == 0 {
		return st.Mark, nil
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
	err := eachIn(ctx, c, `SELECT device_id, token, user_id FROM devices WHERE app_id = ? AND device_id IN `, appID, ids,
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
			return t.Pos - st.Marked, nil
		}
	}
	return st.Mark, nil
}

// dropDevices deletes the devices of dead tokens, each only while it still
// holds the token found dead.
func dropDevices(ctx context.Context, c conn, appID string, os []sendstore.Outcome) error {
	args := make([][]any, len(os))
	for i, o := range os {
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
// pending after it. Each chunk is decoded as it is read.
func (s *Store) slotDeliveries(ctx context.Context, pushID, where string, rows []herald.Delivery, keep func(herald.Delivery) bool) ([]herald.Delivery, error) {
	var reason string
	if err := s.reader().queryRow(ctx, `SELECT failure_reason FROM pushes WHERE id = ?`, pushID).Scan(&reason); err != nil {
		if errors.Is(err, herald.ErrNotFound) {
			return nil, nil
		}
		return nil, err
	}
	hasRow := make(map[int]bool, len(rows))
	for _, d := range rows {
		hasRow[d.Seq] = true
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
			if hasRow[d.Seq] || keep != nil && !keep(d) {
				continue
			}
			switch {
			case i < c.settled:
				d.State, d.Attempts = herald.DeliverySent, 1
			case c.failed:
				d.State, d.Error = herald.DeliveryFailed, reason
			case i < c.marked:
				d.State = herald.DeliveryInflight
			}
			out = append(out, d)
		}
		return nil
	}, `SELECT `+chunkColumns+` FROM push_chunks WHERE `+where, pushID)
	return out, err
}

// eachIn runs query, which ends in "IN ", with the list of values, in
// batches that keep under SQLite's variable limit. Each batch's list is
// padded with NULLs to a power of two, so that a handful of statements
// serve every length and are prepared once.
func eachIn(ctx context.Context, c conn, query, first string, values []string, scan func(scanner) error) error {
	const batch = 512
	for start := 0; start < len(values); start += batch {
		part := values[start:min(start+batch, len(values))]
		n := 8
		for n < len(part) {
			n *= 2
		}
		args := make([]any, 1, n+1)
		args[0] = first
		for _, v := range part {
			args = append(args, v)
		}
		for len(args) < n+1 {
			args = append(args, nil)
		}
		if err := c.each(ctx, scan, query+`(`+placeholders(n)+`)`, args...); err != nil {
			return err
		}
	}
	return nil
}
