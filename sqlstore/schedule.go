package sqlstore

import (
	"context"
	"time"

	"github.com/heraldpush/herald"
)

// DueWork lists the send work the schedule watch fires (see
// herald.WatchQuery), each kind read on its partial index: scheduled
// pushes (pushes_scheduled), fan-outs begun (pushes_fanout_open) and
// deferred chunks (push_chunks_deferred). Stalled fan-outs come newest
// first, so that one that keeps failing does not keep the others out.
func (s *PushStore) DueWork(ctx context.Context, q herald.WatchQuery) ([]herald.DueWork, error) {
	var out []herald.DueWork
	scan := func(deferred bool) func(r scanner) error {
		return func(r scanner) error {
			w := herald.DueWork{Deferred: deferred}
			var at int64
			if err := r.Scan(&w.PushID, &w.Chunk, &at); err != nil {
				return err
			}
			w.At = time.UnixMilli(at).UTC()
			out = append(out, w)
			return nil
		}
	}
	c := s.reader()
	if err := c.each(ctx, scan(false), `SELECT id, 0, scheduled_at FROM pushes
		WHERE status = 'scheduled' AND started_at IS NULL AND scheduled_at IS NOT NULL AND scheduled_at >= ? AND scheduled_at <= ?
		ORDER BY scheduled_at LIMIT ?`, q.From.UnixMilli(), q.Until.UnixMilli(), q.Limit); err != nil {
		return nil, err
	}
	if err := c.each(ctx, scan(false), `SELECT id, 0, fanout_at FROM pushes
		WHERE status = 'sending' AND fanout_done = FALSE AND fanout_at < ?
		ORDER BY fanout_at DESC LIMIT ?`, q.FanoutStalled.UnixMilli(), q.Limit); err != nil {
		return nil, err
	}
	err := c.each(ctx, scan(true), `SELECT c.push_id, c.chunk, c.deferred_until FROM push_chunks c JOIN pushes p ON p.id = c.push_id
		WHERE c.deferred_until IS NOT NULL AND c.done = FALSE AND p.status = 'sending'
		AND (c.marked = 0 AND c.deferred_until >= ? AND c.deferred_until <= ?
			OR c.marked > 0 AND c.deferred_until <= ? AND c.moved_at < ?)
		ORDER BY c.deferred_until LIMIT ?`, q.From.UnixMilli(), q.Until.UnixMilli(), q.Until.UnixMilli(), q.ChunkStalled.UnixMilli(), q.Limit)
	return out, err
}
