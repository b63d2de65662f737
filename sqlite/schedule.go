package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/heraldpush/herald"
)

// scheduledPush loads a push with its River job id inside tx.
func scheduledPush(ctx context.Context, tx *sql.Tx, id string) (herald.Push, sql.NullInt64, error) {
	var jobID sql.NullInt64
	p, err := scanPush(tx.QueryRowContext(ctx, `SELECT `+pushColumns+`, job_id FROM pushes WHERE id = ?`, id), &jobID)
	return p, jobID, err
}

// EditScheduled applies edit to a scheduled push in one transaction.
func (db *DB) EditScheduled(ctx context.Context, pushID string, edit func(p *herald.Push) (herald.Job, error)) (herald.Push, error) {
	var out herald.Push
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		p, jobID, err := scheduledPush(ctx, tx, pushID)
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
		if _, err := tx.ExecContext(ctx, `UPDATE pushes SET title = ?, content = ?, link_url = ?, image_url = ?, badge = ?,
			marketing = ?, scheduled_at = ?, edits = ? WHERE id = ?`, p.Content.Title, p.Content.Content, p.Content.LinkURL,
			p.Content.ImageURL, p.Badge, p.Marketing, ms(p.ScheduledAt), string(edits), p.ID); err != nil {
			return err
		}
		if job != nil {
			if jobID.Valid {
				if _, err := db.Queue.JobCancelTx(ctx, tx, jobID.Int64); err != nil {
					return fmt.Errorf("cancel job: %w", err)
				}
			}
			res, err := db.Queue.InsertTx(ctx, tx, job, nil)
			if err != nil {
				return fmt.Errorf("insert job: %w", err)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE pushes SET job_id = ? WHERE id = ?`, res.Job.ID, p.ID); err != nil {
				return err
			}
		}
		out = p
		return nil
	})
	return out, err
}

// CancelScheduled cancels a scheduled push and refunds its charge on the
// day it was charged.
func (db *DB) CancelScheduled(ctx context.Context, pushID string, check func(p herald.Push) error) (herald.Push, error) {
	var out herald.Push
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		p, jobID, err := scheduledPush(ctx, tx, pushID)
		if err != nil {
			return err
		}
		if err := check(p); err != nil {
			return err
		}
		now := db.Now()
		if _, err := tx.ExecContext(ctx, `UPDATE pushes SET status = 'cancelled', finished_at = ? WHERE id = ?`, now.UnixMilli(), p.ID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO usage (app_id, push_id, day, half_units, created_at)
			SELECT app_id, push_id, day, -half_units, ? FROM usage WHERE push_id = ? AND half_units > 0`, now.UnixMilli(), p.ID); err != nil {
			return err
		}
		if jobID.Valid {
			if _, err := db.Queue.JobCancelTx(ctx, tx, jobID.Int64); err != nil {
				return fmt.Errorf("cancel job: %w", err)
			}
		}
		p.Status = herald.StatusCancelled
		p.FinishedAt = &now
		out = p
		return nil
	})
	return out, err
}
