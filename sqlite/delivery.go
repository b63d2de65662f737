package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/heraldpush/herald"
)

// StartSending records the fan-out of a push still waiting for it.
func (db *DB) StartSending(ctx context.Context, pushID string, f herald.Fanout) (bool, error) {
	started := false
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		// Claim the fan-out first: of several at once, one moves the push
		// out of waiting; the others change nothing.
		chunks := map[int]bool{}
		for _, d := range f.Deliveries {
			if !d.State.Final() {
				chunks[d.Chunk] = true
			}
		}
		now := db.Now()
		res, err := tx.ExecContext(ctx, `UPDATE pushes SET status = 'sending', started_at = ?, open_chunks = ?
			WHERE id = ? AND started_at IS NULL AND status IN (`+inList(herald.FanoutStatuses)+`)`, now.UnixMilli(), len(chunks), pushID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			if _, err := db.PushStatus(ctx, pushID); err != nil {
				return err // ErrNotFound
			}
			return nil
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO deliveries (push_id, seq, recipient_idx, user_id, device_id, token, platform,
			app_source_version, token_updated_at, chunk, state, old_for_badge, old_for_image) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, d := range f.Deliveries {
			if _, err := stmt.ExecContext(ctx, pushID, d.Seq, d.RecipientIdx, d.UserID, d.DeviceID, d.Token, d.Platform,
				d.AppSourceVersion, d.TokenUpdatedAt.UnixMilli(), d.Chunk, d.State, d.OldForBadge, d.OldForImage); err != nil {
				return err
			}
		}
		for c := range chunks {
			if _, err := tx.ExecContext(ctx, `INSERT INTO push_chunks (push_id, chunk) VALUES (?, ?)`, pushID, c); err != nil {
				return err
			}
		}
		if f.Recipients != nil {
			if err := db.recordTargets(ctx, tx, pushID, f, now); err != nil {
				return err
			}
		}
		started = true
		return db.insertJobs(ctx, tx, f.Jobs)
	})
	return started, err
}

// recordTargets stores the users a topic or all-users push found at its
// fan-out, and charges for them.
func (db *DB) recordTargets(ctx context.Context, tx *sql.Tx, pushID string, f herald.Fanout, now time.Time) error {
	if err := insertRecipients(ctx, tx, pushID, f.Recipients); err != nil {
		return err
	}
	var appID string
	if err := tx.QueryRowContext(ctx, `SELECT app_id FROM pushes WHERE id = ?`, pushID).Scan(&appID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE pushes SET requested_users = ?, server_actions_half = ? WHERE id = ?`,
		len(f.Recipients), f.ChargeHalf, pushID); err != nil {
		return err
	}
	return db.charge(ctx, tx, appID, pushID, f.ChargeHalf, now)
}

const deliveryColumns = `seq, recipient_idx, user_id, device_id, token, platform, app_source_version, token_updated_at, chunk,
	state, reason, error, attempts, resent`

func (db *DB) deliveries(ctx context.Context, where string, args ...any) ([]herald.Delivery, error) {
	rows, err := db.Reader.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE `+where+` ORDER BY seq`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []herald.Delivery
	for rows.Next() {
		var d herald.Delivery
		var updated int64
		if err := rows.Scan(&d.Seq, &d.RecipientIdx, &d.UserID, &d.DeviceID, &d.Token, &d.Platform, &d.AppSourceVersion,
			&updated, &d.Chunk, &d.State, &d.Reason, &d.Error, &d.Attempts, &d.Resent); err != nil {
			return nil, err
		}
		d.TokenUpdatedAt = time.UnixMilli(updated).UTC()
		out = append(out, d)
	}
	return out, rows.Err()
}

// OpenDeliveries returns the chunk's deliveries that have no outcome yet.
func (db *DB) OpenDeliveries(ctx context.Context, pushID string, chunk int) ([]herald.Delivery, error) {
	return db.deliveries(ctx, `push_id = ? AND chunk = ? AND state IN (`+inList(herald.OpenDeliveryStates)+`)`, pushID, chunk)
}

// Deliveries returns every delivery of a push.
func (db *DB) Deliveries(ctx context.Context, pushID string) ([]herald.Delivery, error) {
	return db.deliveries(ctx, `push_id = ?`, pushID)
}

// MarkInflight records that deliveries are about to be sent to the devices
// and tokens they were resolved to. Each update is guarded: the delivery is
// still open and its device still holds the token (and, with an owner, is
// still mapped to it), so a token moved or a device handed to another user
// since the resolution is never marked, and so never sent. One found
// inflight already was sent before a crash, maybe, and is marked resent.
func (db *DB) MarkInflight(ctx context.Context, appID, pushID string, ts []herald.SendTarget) ([]int, error) {
	var marked []int
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		marked = marked[:0]
		stmt, err := tx.PrepareContext(ctx, `UPDATE deliveries SET resent = resent OR state = 'inflight', state = 'inflight',
			device_id = ?1, token = ?2
			WHERE push_id = ?3 AND seq = ?4 AND state IN (`+inList(herald.OpenDeliveryStates)+`)
			AND EXISTS (SELECT 1 FROM devices WHERE app_id = ?5 AND device_id = ?1 AND token = ?2
				AND (?6 IS NULL OR user_id = ?6))`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, t := range ts {
			res, err := stmt.ExecContext(ctx, t.DeviceID, t.Token, pushID, t.Seq, appID, t.Owner)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				marked = append(marked, t.Seq)
			}
		}
		return nil
	})
	return marked, err
}

// RecordOutcomes records send results and drops dead tokens.
func (db *DB) RecordOutcomes(ctx context.Context, appID, pushID string, os []herald.Outcome) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		upd, err := tx.PrepareContext(ctx, `UPDATE deliveries SET state = ?, reason = ?, error = ?, attempts = attempts + 1
			WHERE push_id = ? AND seq = ?`)
		if err != nil {
			return err
		}
		defer upd.Close()
		for _, o := range os {
			if _, err := upd.ExecContext(ctx, o.State, o.Reason, o.Error, pushID, o.Seq); err != nil {
				return err
			}
			if o.DropDevice {
				if _, err := tx.ExecContext(ctx, `DELETE FROM devices WHERE app_id = ? AND device_id = ? AND token = ?`,
					appID, o.DeviceID, o.Token); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// CompleteChunk marks a chunk finished and inserts finish after the last.
// Each chunk is completed once (guarded on done = 0), and the push's count
// of open chunks is decremented with RETURNING, so exactly one completion
// sees zero, however many run at once.
func (db *DB) CompleteChunk(ctx context.Context, pushID string, chunk int, finish herald.Job) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE push_chunks SET done = 1 WHERE push_id = ? AND chunk = ? AND done = 0`, pushID, chunk)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // completed before a crash, or the push failed; its finish is on its way
		}
		var open int
		if err := tx.QueryRowContext(ctx, `UPDATE pushes SET open_chunks = open_chunks - 1 WHERE id = ? RETURNING open_chunks`,
			pushID).Scan(&open); err != nil {
			return translate(err)
		}
		if open > 0 {
			return nil
		}
		return db.insertJobs(ctx, tx, []herald.Job{finish})
	})
}

// FailPush ends a push that cannot be sent.
func (db *DB) FailPush(ctx context.Context, pushID, reason string, finish herald.Job) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE pushes SET status = 'failed', failure_reason = ? WHERE id = ? AND status = 'sending'`, reason, pushID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET state = 'failed', error = ?
			WHERE push_id = ? AND state IN (`+inList(herald.OpenDeliveryStates)+`)`, reason, pushID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE push_chunks SET done = 1 WHERE push_id = ?`, pushID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE pushes SET open_chunks = 0 WHERE id = ?`, pushID); err != nil {
			return err
		}
		return db.insertJobs(ctx, tx, []herald.Job{finish})
	})
}

// FinishPush records the unreachable users and the push's end. The end is
// a guarded write (finished_at still unset), made first, so of several
// finishes at once exactly one records anything and queues the webhooks.
func (db *DB) FinishPush(ctx context.Context, pushID string, unreachable []herald.Unreachable, follow []herald.Job) (bool, error) {
	finished := false
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var status herald.PushStatus
		if err := tx.QueryRowContext(ctx, `SELECT status FROM pushes WHERE id = ?`, pushID).Scan(&status); err != nil {
			return translate(err)
		}
		now := db.Now().UnixMilli()
		res, err := tx.ExecContext(ctx, `UPDATE pushes SET status = ?, finished_at = ?, started_at = COALESCE(started_at, ?)
			WHERE id = ? AND status = ? AND finished_at IS NULL`, status.EndStatus(), now, now, pushID, status)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // finished already (or its status moved: the next finish judges it)
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO unreachable (push_id, user_id, reason) VALUES (?,?,?) ON CONFLICT DO NOTHING`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, u := range unreachable {
			if _, err := stmt.ExecContext(ctx, pushID, u.UserID, u.Reason); err != nil {
				return err
			}
		}
		finished = true
		return db.insertJobs(ctx, tx, follow)
	})
	return finished, err
}
