package sqlstore

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/heraldpush/herald"
)

// HoldPushes marks held every push sending, and every scheduled push due
// at or before at, keeping the status each returns to when released.
func (s *PushStore) HoldPushes(ctx context.Context, at time.Time) ([]herald.Push, error) {
	var ids []string
	err := s.inTx(ctx, func(c conn) error {
		ids = ids[:0]
		return c.each(ctx, func(row scanner) error {
			var id string
			err := row.Scan(&id)
			ids = append(ids, id)
			return err
		}, `UPDATE pushes SET held_from = status, status = 'held'
			WHERE status = 'sending' OR (status = 'scheduled' AND scheduled_at <= ?) RETURNING id`, at.UnixMilli())
	})
	if err != nil {
		return nil, err
	}
	out := make([]herald.Push, 0, len(ids))
	for _, id := range ids {
		p, err := s.PushRecord(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b herald.Push) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

// heldFrom returns the status a push was held in: NotHeld unless it is
// held.
func heldFrom(ctx context.Context, c conn, pushID string) (herald.PushStatus, error) {
	var status herald.PushStatus
	var from sql.NullString
	if err := c.queryRow(ctx, `SELECT status, held_from FROM pushes WHERE id = ?`, pushID).Scan(&status, &from); err != nil {
		return "", err
	}
	if status != herald.StatusHeld || !from.Valid {
		return "", herald.NotHeld(status)
	}
	return herald.PushStatus(from.String), nil
}

// HeldWork returns what a held push has left: its fan-out's end, its
// chunks not done (a deferred one with its morning) and its open count.
func (s *PushStore) HeldWork(ctx context.Context, pushID string) (herald.HeldWork, error) {
	var w herald.HeldWork
	err := s.inTx(ctx, func(c conn) error {
		var err error
		if w.From, err = heldFrom(ctx, c, pushID); err != nil {
			return err
		}
		if w.Push, err = scanPush(c.queryRow(ctx, `SELECT `+pushColumns+` FROM pushes WHERE id = ?`, pushID)); err != nil {
			return err
		}
		if err := c.queryRow(ctx, `SELECT fanout_done, open_chunks FROM pushes WHERE id = ?`, pushID).Scan(&w.FanoutDone, &w.OpenChunks); err != nil {
			return err
		}
		w.Chunks = w.Chunks[:0]
		return c.each(ctx, func(row scanner) error {
			var h herald.HeldChunk
			var morning sql.NullInt64
			err := row.Scan(&h.Chunk, &morning)
			h.Morning = fromMS(morning)
			w.Chunks = append(w.Chunks, h)
			return err
		}, `SELECT chunk, deferred_until FROM push_chunks WHERE push_id = ? AND done = FALSE ORDER BY chunk`, pushID)
	})
	return w, err
}
