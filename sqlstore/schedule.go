package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/heraldpush/herald"
)

// scheduledPush loads a push with its River job id inside a transaction,
// and its version: the stored edits and send time, which every edit
// changes.
func scheduledPush(ctx context.Context, c conn, id string) (herald.Push, sql.NullInt64, pushVersion, error) {
	var jobID sql.NullInt64
	var v pushVersion
	p, err := scanPush(c.queryRow(ctx, `SELECT `+pushColumns+`, job_id, edits, scheduled_at FROM pushes WHERE id = ?`, id),
		&jobID, &v.edits, &v.scheduledAt)
	return p, jobID, v, err
}

// pushVersion is what a guarded write of a scheduled push compares.
type pushVersion struct {
	edits       string
	scheduledAt sql.NullInt64
}

// EditScheduled applies edit to a scheduled push in one transaction.
func (s *Store) EditScheduled(ctx context.Context, pushID string, edit func(p *herald.Push) (herald.Job, error)) (herald.Push, error) {
	var out herald.Push
	err := s.inTxRetry(ctx, false, func(c conn) error {
		p, jobID, v, err := scheduledPush(ctx, c, pushID)
		if err != nil {
			return err
		}
		job, err := edit(&p)
		if err != nil {
			return err
		}
		edits, err := json.Marshal(p.Edits)
		if err != nil {
			return err
		}
		// Guarded on the push as read: still scheduled, not fanned out,
		// with the same edits and time (another edit, a cancel or the
		// fan-out may have come first).
		if err := guard(c.exec(ctx, `UPDATE pushes SET title = ?, content = ?, link_url = ?, image_url = ?, badge = ?,
			marketing = ?, ad_footer = ?, scheduled_at = ?, edits = ?
			WHERE id = ? AND status = 'scheduled' AND started_at IS NULL AND edits = ? AND scheduled_at IS NOT DISTINCT FROM ?`,
			p.Content.Title, p.Content.Content, p.Content.LinkURL, p.Content.ImageURL, p.Badge, p.Marketing, p.AdFooter,
			ms(p.ScheduledAt), string(edits), p.ID, v.edits, v.scheduledAt)); err != nil {
			return err
		}
		if job != nil {
			if err := replaceJob(ctx, c, p.ID, jobID, job); err != nil {
				return err
			}
		}
		out = p
		return nil
	})
	return out, err
}

// replaceJob cancels a push's job (when it has one) and inserts job in its
// place.
func replaceJob(ctx context.Context, c conn, pushID string, old sql.NullInt64, job herald.Job) error {
	if old.Valid {
		if err := c.cancelJob(ctx, old.Int64); err != nil {
			return err
		}
	}
	ids, err := c.insertJobs(ctx, []herald.Job{job})
	if err != nil {
		return err
	}
	_, err = c.exec(ctx, `UPDATE pushes SET job_id = ? WHERE id = ?`, ids[0], pushID)
	return err
}

// CancelScheduled cancels a scheduled push and refunds its charge on the
// day it was charged.
func (s *Store) CancelScheduled(ctx context.Context, pushID string, check func(p herald.Push) error) (herald.Push, error) {
	var out herald.Push
	err := s.inTxRetry(ctx, false, func(c conn) error {
		p, jobID, _, err := scheduledPush(ctx, c, pushID)
		if err != nil {
			return err
		}
		if err := check(p); err != nil {
			return err
		}
		now := s.Now()
		// Guarded: of a cancel racing an edit's deadline, another cancel or
		// the fan-out, one wins; the others run again and meet check.
		if err := guard(c.exec(ctx, `UPDATE pushes SET status = 'cancelled', finished_at = ?
			WHERE id = ? AND status = 'scheduled' AND started_at IS NULL`, now.UnixMilli(), p.ID)); err != nil {
			return err
		}
		charges, err := usageOf(ctx, c, p.ID)
		if err != nil {
			return err
		}
		if err := insertUsage(ctx, c, herald.Refund(charges, now)); err != nil {
			return err
		}
		if jobID.Valid {
			if err := c.cancelJob(ctx, jobID.Int64); err != nil {
				return err
			}
		}
		p.Status = herald.StatusCancelled
		p.FinishedAt = &now
		out = p
		return nil
	})
	return out, err
}

// usageOf returns a push's ledger entries.
func usageOf(ctx context.Context, c conn, pushID string) ([]herald.UsageEntry, error) {
	var out []herald.UsageEntry
	err := c.each(ctx, func(row scanner) error {
		var e herald.UsageEntry
		var at int64
		if err := row.Scan(&e.AppID, &e.PushID, &e.Day, &e.Half, &at); err != nil {
			return err
		}
		e.At = time.UnixMilli(at).UTC()
		out = append(out, e)
		return nil
	}, `SELECT app_id, push_id, day, half_units, created_at FROM usage WHERE push_id = ? ORDER BY id`, pushID)
	return out, err
}

// DueWork lists the send work the schedule watch fires (see
// herald.WatchQuery), each kind read on its partial index: scheduled
// pushes (pushes_scheduled), fan-outs begun (pushes_fanout_open) and
// deferred chunks (push_chunks_deferred). Stalled fan-outs come newest
// first, so that one that keeps failing does not keep the others out.
func (s *Store) DueWork(ctx context.Context, q herald.WatchQuery) ([]herald.DueWork, error) {
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
