package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/heraldpush/herald"
)

// recordDeferred marks a fan-out page's deferred chunks (herald.NightDefer):
// when they are sent, and what cancelling them refunds.
func recordDeferred(ctx context.Context, c conn, pushID string, ds []herald.DeferredChunk) error {
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
// chunks' refund (ledger and serverActions), and finish is queued when
// nothing else is open. ErrScheduleLocked when the push has no deferred
// part left that has not begun.
func (s *Store) CancelDeferred(ctx context.Context, pushID string, check func(until time.Time) error, finish herald.Job) (herald.Push, error) {
	err := s.inTxRetry(ctx, false, func(c conn) error {
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
		for _, ch := range chunks {
			if err := suppressChunk(ctx, c, pushID, ch.storedChunk); err != nil {
				return err
			}
		}
		return refundDeferred(ctx, c, pushID, len(chunks), refund, s.Now(), finish)
	})
	if err != nil {
		return herald.Push{}, err
	}
	return s.Push(ctx, pushID)
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
// suppressed by the night, and completes it.
func suppressChunk(ctx context.Context, c conn, pushID string, ch storedChunk) error {
	slots, err := ch.decode()
	if err != nil {
		return err
	}
	for i := range slots {
		slots[i].State = herald.DeliverySuppressedNight
	}
	if err := guard(c.exec(ctx, `UPDATE push_chunks SET settled = size, marked = size, done = TRUE
		WHERE push_id = ? AND chunk = ? AND settled = 0 AND marked = 0 AND done = FALSE`, pushID, ch.chunk)); err != nil {
		return err
	}
	return insertDeliveries(ctx, c, pushID, slots)
}

// refundDeferred closes n cancelled chunks of a sending push, refunds
// half units of its charge, and queues finish when nothing is left open.
func refundDeferred(ctx context.Context, c conn, pushID string, n int, half int64, now time.Time, finish herald.Job) error {
	var open int
	if err := c.queryRow(ctx, `UPDATE pushes SET open_chunks = open_chunks - ?, server_actions_half = server_actions_half - ?
		WHERE id = ? AND status = 'sending' RETURNING open_chunks`, n, half, pushID).Scan(&open); err != nil {
		return err
	}
	charges, err := usageOf(ctx, c, pushID)
	if err != nil {
		return err
	}
	if err := insertUsage(ctx, c, herald.DeferRefund(charges, half, now)); err != nil {
		return err
	}
	if open > 0 {
		return nil
	}
	_, err = c.insertJobs(ctx, []herald.Job{finish})
	return err
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
