package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// recordDeferred marks a fan-out page's deferred chunks (herald.NightDefer):
// when they are sent, and what cancelling them refunds.
func recordDeferred(ctx context.Context, c conn, pushID string, ds []sendstore.DeferredChunk) error {
	args := make([][]any, len(ds))
	for i, d := range ds {
		args[i] = []any{d.Until.UnixMilli(), d.RefundHalf, pushID, d.Chunk}
	}
	_, err := c.execMany(ctx, `UPDATE push_chunks SET deferred_until = ?, refund_half = ? WHERE push_id = ? AND chunk = ?`, args)
	return err
}

// fillDeferred sets a deferring push's tokens that wait for the morning
// (every slot of its deferred chunks not yet settled) and when they go.
func fillDeferred(ctx context.Context, c conn, p *herald.Push) error {
	if p.NightPolicy != herald.NightDefer {
		return nil
	}
	var until sql.NullInt64
	err := c.queryRow(ctx, `SELECT CAST(COALESCE(SUM(size - settled), 0) AS BIGINT), MIN(deferred_until)
		FROM push_chunks WHERE push_id = ? AND deferred_until IS NOT NULL AND done = FALSE`, p.ID).Scan(&p.Counts.DeferredNight, &until)
	if err == nil && p.Counts.DeferredNight > 0 {
		p.DeferredUntil = fromMS(until)
	}
	return err
}

// deferredChunk is a deferred chunk as cancelling it reads it.
type deferredChunk struct {
	storedChunk
	until  time.Time
	refund int64
}

// CancelDeferred cancels the deferred part of a sending push after check
// passes on its time: each deferred chunk not yet begun has its slots
// settled as suppressed by the night, the push's charge drops by the
// chunks' refund (ledger and serverActions), the push's edit trail records
// the cancel (herald.DeferCancelEdit), and finish is queued when nothing
// else is open (closed reports it). ErrScheduleLocked when the push has no
// deferred part left that has not begun.
func (s *Store) CancelDeferred(ctx context.Context, pushID string, check func(until time.Time) error, finish herald.Job) (herald.Push, bool, error) {
	var closed bool
	err := s.inTxRetry(ctx, false, func(c conn) error {
		closed = false // the transaction may run again
		if err := lockPush(ctx, c, pushID); err != nil {
			return err
		}
		chunks, err := deferredChunks(ctx, c, pushID)
		if err != nil {
			return err
		}
		if len(chunks) == 0 {
			return herald.ErrNothingDeferred
		}
		until := chunks[0].until
		var refund int64
		for _, ch := range chunks {
			until = minTime(until, ch.until)
			refund += ch.refund
			if ch.settled > 0 || ch.marked > 0 {
				return herald.ErrNothingDeferred // its sending has begun
			}
		}
		if err := check(until); err != nil {
			return err
		}
		tokens, users := 0, map[string]bool{}
		for _, ch := range chunks {
			slots, err := suppressChunk(ctx, c, pushID, ch.storedChunk)
			if err != nil {
				return err
			}
			tokens += len(slots)
			for _, d := range slots {
				if d.UserID != "" {
					users[d.UserID] = true
				}
			}
		}
		now := s.Now()
		charged, open, err := refundDeferred(ctx, c, pushID, len(chunks), refund, now, finish)
		if err != nil {
			return err
		}
		closed = open == 0
		return appendEdit(ctx, c, pushID, herald.DeferCancelEdit(now, until, tokens, len(users), refund, charged))
	})
	if err != nil {
		return herald.Push{}, false, err
	}
	p, err := s.Push(ctx, pushID)
	return p, closed, err
}

// appendEdit adds an entry to a push's edit trail.
func appendEdit(ctx context.Context, c conn, pushID string, e herald.Edit) error {
	var stored string
	if err := c.queryRow(ctx, `SELECT edits FROM pushes WHERE id = ?`, pushID).Scan(&stored); err != nil {
		return err
	}
	var edits []herald.Edit
	if err := json.Unmarshal([]byte(stored), &edits); err != nil {
		return err
	}
	b, err := json.Marshal(append(edits, e))
	if err != nil {
		return err
	}
	_, err = c.exec(ctx, `UPDATE pushes SET edits = ? WHERE id = ?`, string(b), pushID)
	return err
}

// deferredChunks reads a push's deferred chunks that are not done.
func deferredChunks(ctx context.Context, c conn, pushID string) ([]deferredChunk, error) {
	var out []deferredChunk
	err := c.each(ctx, func(row scanner) error {
		var d deferredChunk
		var until int64
		err := row.Scan(&d.chunk, &d.size, &d.settled, &d.marked, &d.failed, &d.slots, &until, &d.refund)
		d.until = time.UnixMilli(until).UTC()
		out = append(out, d)
		return err
	}, `SELECT `+chunkColumns+`, deferred_until, refund_half FROM push_chunks
		WHERE push_id = ? AND deferred_until IS NOT NULL AND done = FALSE ORDER BY chunk`, pushID)
	return out, err
}

// suppressChunk settles every slot of a deferred chunk not yet begun as
// suppressed by the night, completes it, and returns its slots.
func suppressChunk(ctx context.Context, c conn, pushID string, ch storedChunk) ([]herald.Delivery, error) {
	slots, err := ch.decode()
	if err != nil {
		return nil, err
	}
	for i := range slots {
		slots[i].State = herald.DeliverySuppressedNight
	}
	if err := guard(c.exec(ctx, `UPDATE push_chunks SET settled = size, marked = size, done = TRUE
		WHERE push_id = ? AND chunk = ? AND settled = 0 AND marked = 0 AND done = FALSE`, pushID, ch.chunk)); err != nil {
		return nil, err
	}
	return slots, insertDeliveries(ctx, c, pushID, slots)
}

// refundDeferred closes n cancelled chunks of a sending push, refunds
// half units of its charge, and queues finish when nothing is left open.
// It returns the push's charge before the refund and its chunks still
// open.
func refundDeferred(ctx context.Context, c conn, pushID string, n int, half int64, now time.Time, finish herald.Job) (charged int64, open int, err error) {
	if err := c.queryRow(ctx, `UPDATE pushes SET open_chunks = open_chunks - ?, server_actions_half = server_actions_half - ?
		WHERE id = ? AND status = 'sending' RETURNING open_chunks, server_actions_half`, n, half, pushID).Scan(&open, &charged); err != nil {
		return 0, 0, err
	}
	charged += half
	charges, err := usageOf(ctx, c, pushID)
	if err != nil {
		return 0, 0, err
	}
	if err := insertUsage(ctx, c, herald.DeferRefund(charges, half, now)); err != nil {
		return 0, 0, err
	}
	if open > 0 {
		return charged, open, nil
	}
	_, err = c.insertJobs(ctx, []herald.Job{finish})
	return charged, open, err
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
