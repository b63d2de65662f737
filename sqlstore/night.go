package sqlstore

import (
	"context"
	"database/sql"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// recordDeferred marks a fan-out page's deferred chunks (herald.NightDefer):
// when they are sent, and what cancelling them refunds.
func recordDeferred(ctx context.Context, c conn, pushID string, ds []sendstore.DeferredChunk) error {
	args := make([][]any, len(ds))
	for i, d := range ds {
		args[i] = []any{d.Until.UnixMilli(), d.RefundHalf, d.ZonePart, pushID, d.Chunk}
	}
	_, err := c.execMany(ctx, `UPDATE push_chunks SET deferred_until = ?, refund_half = ?, zone_part = ? WHERE push_id = ? AND chunk = ?`, args)
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
		FROM push_chunks WHERE push_id = ? AND deferred_until IS NOT NULL AND zone_part = FALSE AND done = FALSE`, p.ID).Scan(&p.Counts.DeferredNight, &until)
	if err == nil && p.Counts.DeferredNight > 0 {
		p.DeferredUntil = fromMS(until)
	}
	return err
}

// fillNextLocal sets when a local-time push's next zone part is sent (the
// first of its zone parts not done), nil when none waits.
func fillNextLocal(ctx context.Context, c conn, p *herald.Push) error {
	if !p.LocalTime {
		return nil
	}
	var next sql.NullInt64
	err := c.queryRow(ctx, `SELECT MIN(deferred_until) FROM push_chunks WHERE push_id = ? AND zone_part = TRUE AND done = FALSE`,
		p.ID).Scan(&next)
	p.NextLocalAt = fromMS(next)
	return err
}
