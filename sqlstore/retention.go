package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/retention"
)

// Retention's writes (retention.Store) are bulk work (TxOptions.Bulk),
// each one short transaction of at most its limit of rows: what they have
// to decide is read first outside the transaction where it cannot change
// (a finished push's rows, an old consent record), so the writer is held
// for the writes alone.

// expireBatch bounds the pushes ExpirePushes clears in one transaction,
// whatever its limit: each costs a read of its counts before.
const expireBatch = 100

// ExpirePushes clears the bodies of the pushes that finished at or before
// before, oldest first (see retention.Store). Each push's counts are
// summed from its rows before its transaction (a finished push's rows no
// longer change) and kept in push_counts by it.
func (s *RetentionStore) ExpirePushes(ctx context.Context, before, now time.Time, limit int) (retention.Step, error) {
	limit = min(max(limit, 1), expireBatch)
	r := s.reader()
	type expiring struct {
		id     string
		counts herald.Counts
		edits  string
	}
	var ps []expiring
	err := r.each(ctx, func(row scanner) error {
		var p expiring
		err := row.Scan(&p.id, &p.edits)
		ps = append(ps, p)
		return err
	}, `SELECT id, edits FROM pushes WHERE finished_at IS NOT NULL AND expired_at IS NULL AND finished_at <= ?
		AND status IN ('done', 'failed', 'cancelled', 'rejected', 'approval_expired') ORDER BY finished_at LIMIT ?`, before.UnixMilli(), limit)
	if err != nil || len(ps) == 0 {
		return retention.Step{Deleted: retention.Deleted{}}, err
	}
	for i := range ps {
		if err := sumCounts(ctx, r, &ps[i].counts, `push_id = ?`, ps[i].id); err != nil {
			return retention.Step{}, err
		}
		var edits []herald.Edit
		if err := json.Unmarshal([]byte(ps[i].edits), &edits); err != nil {
			return retention.Step{}, err
		}
		b, _ := json.Marshal(herald.ExpireEdits(edits))
		ps[i].edits = string(b)
	}
	var n int64
	held, err := s.retentionTx(ctx, func(c conn) error {
		n = 0
		for _, p := range ps {
			done, err := c.exec(ctx, `UPDATE pushes SET expired_at = ?, title = '', content = '', link_url = '', image_url = '', localized = NULL,
				recipients = ?, token = '', edits = ? WHERE id = ? AND expired_at IS NULL`,
				now.UnixMilli(), encodeRecipients(nil), p.edits, p.id)
			if err != nil {
				return err
			}
			if done == 0 {
				continue // expired meanwhile (another node's run)
			}
			k := p.counts
			if _, err := c.exec(ctx, `INSERT INTO push_counts (push_id, tokens, sent, failed, suppressed_consent, suppressed_night,
				unreachable, badge_unsupported, image_unsupported, suppressed_cap) VALUES (?,?,?,?,?,?,?,?,?,?)`, p.id, k.Tokens, k.Sent, k.Failed,
				k.SuppressedConsent, k.SuppressedNight, k.Unreachable, k.BadgeUnsupported, k.ImageUnsupported, k.SuppressedCap); err != nil {
				return err
			}
			if _, err := c.exec(ctx, `INSERT INTO retention_queue (push_id) VALUES (?)`, p.id); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return retention.Step{Deleted: retention.Deleted{retention.RetainedPushes: n}, More: len(ps) == limit, Held: held}, err
}

// retentionTx runs fn as inBulkTx does and returns how long its (last)
// run held the writer: from its first statement to its commit.
func (s *RetentionStore) retentionTx(ctx context.Context, fn func(c conn) error) (time.Duration, error) {
	var began time.Time
	err := s.inBulkTx(ctx, func(c conn) error {
		began = time.Now()
		return fn(c)
	})
	if began.IsZero() {
		return 0, err
	}
	return time.Since(began), err
}

// keptCounts adds to counts those kept for the expired pushes the
// condition on push_id selects (see ExpirePushes).
func keptCounts(ctx context.Context, c conn, counts *herald.Counts, pushes string, args ...any) error {
	var k struct{ tokens, sent, failed, consent, night, unreachable, badge, image, capped int }
	err := c.queryRow(ctx, `SELECT CAST(COALESCE(SUM(tokens), 0) AS BIGINT), CAST(COALESCE(SUM(sent), 0) AS BIGINT),
		CAST(COALESCE(SUM(failed), 0) AS BIGINT), CAST(COALESCE(SUM(suppressed_consent), 0) AS BIGINT),
		CAST(COALESCE(SUM(suppressed_night), 0) AS BIGINT), CAST(COALESCE(SUM(unreachable), 0) AS BIGINT),
		CAST(COALESCE(SUM(badge_unsupported), 0) AS BIGINT), CAST(COALESCE(SUM(image_unsupported), 0) AS BIGINT),
		CAST(COALESCE(SUM(suppressed_cap), 0) AS BIGINT)
		FROM push_counts WHERE `+pushes, args...).Scan(&k.tokens, &k.sent, &k.failed, &k.consent, &k.night,
		&k.unreachable, &k.badge, &k.image, &k.capped)
	counts.Tokens += k.tokens
	counts.Sent += k.sent
	counts.Failed += k.failed
	counts.SuppressedConsent += k.consent
	counts.SuppressedNight += k.night
	counts.SuppressedCap += k.capped
	counts.Unreachable += k.unreachable
	counts.BadgeUnsupported += k.badge
	counts.ImageUnsupported += k.image
	return err
}

// expiredRows are the tables holding an expired push's rows, each with
// the columns that name a row within the push, and the weight of a row
// against a transaction's limit: a chunk holds its slots (its tokens
// among them), hundreds of deliveries' worth.
var expiredRows = []struct {
	table, key, kind string
	weight           int
}{
	{"deliveries", "seq", retention.RetainedDeliveries, 1},
	{"push_chunks", "chunk", retention.RetainedChunks, 50},
	{"push_events", "device_id, type", retention.RetainedEvents, 1},
	{"push_pending_events", "device_id, type", retention.RetainedEvents, 1},
	{"unreachable", "user_id", retention.RetainedUnreachable, 1},
	{"push_recipients", "idx", retention.RetainedRecipients, 1},
	{"user_pushes", "user_id, chunk", retention.RetainedRecipients, 1},
}

// pruneQueueBatch is how many queued pushes one PruneExpired looks at.
const pruneQueueBatch = 20

// PruneExpired deletes the rows of the expired pushes (see
// retention.Store), a push's tables one after the other; a push
// whose rows are all gone leaves the queue.
func (s *RetentionStore) PruneExpired(ctx context.Context, limit int) (retention.Step, error) {
	limit = max(limit, 1)
	var d retention.Deleted
	var more bool
	held, err := s.retentionTx(ctx, func(c conn) error {
		d, more = retention.Deleted{}, false
		var queued []string
		err := c.each(ctx, func(row scanner) error {
			var id string
			err := row.Scan(&id)
			queued = append(queued, id)
			return err
		}, `SELECT push_id FROM retention_queue ORDER BY push_id LIMIT ?`, pruneQueueBatch)
		if err != nil {
			return err
		}
		budget := limit
		for _, id := range queued {
			for _, t := range expiredRows {
				n := max(budget/t.weight, 1)
				deleted, err := c.exec(ctx, `DELETE FROM `+t.table+` WHERE push_id = ? AND (`+t.key+`) IN
					(SELECT `+t.key+` FROM `+t.table+` WHERE push_id = ? LIMIT ?)`, id, id, n)
				if err != nil {
					return err
				}
				d[t.kind] += deleted
				budget -= int(deleted) * t.weight
				if deleted == int64(n) || budget <= 0 {
					more = true // this table may hold more, or the limit is spent
					return nil
				}
			}
			if _, err := c.exec(ctx, `DELETE FROM retention_queue WHERE push_id = ?`, id); err != nil {
				return err
			}
		}
		more = len(queued) == pruneQueueBatch
		return nil
	})
	return retention.Step{Deleted: d, More: more, Held: held}, err
}

// PruneIdempotency deletes expired idempotency keys (see
// retention.Store), each app's found by its index on their age.
func (s *RetentionStore) PruneIdempotency(ctx context.Context, before time.Time, limit int) (retention.Step, error) {
	limit = max(limit, 1)
	var n int64
	held, err := s.retentionTx(ctx, func(c conn) error {
		var err error
		n, err = c.exec(ctx, `DELETE FROM idempotency WHERE (app_id, key) IN (SELECT i.app_id, i.key FROM apps a
			JOIN idempotency i ON i.app_id = a.id AND i.created_at <= ? LIMIT ?)`, before.UnixMilli(), limit)
		return err
	})
	return retention.Step{Deleted: retention.Deleted{retention.RetainedIdempotency: n}, More: n == int64(limit), Held: held}, err
}

// PruneConsentTrail deletes old consent records that are not their
// pair's latest (see retention.Store). It looks at the next limit
// records older than before in the order of their time, from the cursor
// (at, id) on, and returns the cursor to go on from.
func (s *RetentionStore) PruneConsentTrail(ctx context.Context, before time.Time, from retention.TrailCursor, limit int) (retention.Step, retention.TrailCursor, error) {
	limit = max(limit, 1)
	var ids []any
	next, seen := from, 0
	// A user's record is superseded by a later one of the same pair (its
	// own, or the same device's); a record without a user by a later one
	// of its device.
	err := s.reader().each(ctx, func(row scanner) error {
		var id, at int64
		var old bool
		if err := row.Scan(&id, &at, &old); err != nil {
			return err
		}
		seen++
		next = retention.TrailCursor{At: at, ID: id}
		if old {
			ids = append(ids, id)
		}
		return nil
	}, `SELECT c.id, c.at, CASE WHEN c.event = 'pending' THEN FALSE
			WHEN c.user_id IS NOT NULL THEN EXISTS (SELECT 1 FROM consent_changes n WHERE n.app_id = c.app_id
				AND n.user_id = c.user_id AND n.seq > c.seq AND n.device_id IS NOT DISTINCT FROM c.device_id)
			ELSE EXISTS (SELECT 1 FROM consent_changes n WHERE n.app_id = c.app_id AND n.user_id IS NULL
				AND n.device_id = c.device_id AND n.id > c.id) END
		FROM consent_changes c WHERE c.at < ? AND (c.at > ? OR (c.at = ? AND c.id > ?))
		ORDER BY c.at, c.id LIMIT ?`, before.UnixMilli(), from.At, from.At, from.ID, limit)
	if err != nil {
		return retention.Step{}, from, err
	}
	var n int64
	var held time.Duration
	if len(ids) > 0 {
		held, err = s.retentionTx(ctx, func(c conn) error {
			var err error
			n, err = c.exec(ctx, `DELETE FROM consent_changes WHERE id IN (`+placeholders(len(ids))+`)`, ids...)
			return err
		})
	}
	return retention.Step{Deleted: retention.Deleted{retention.RetainedConsent: n}, More: seen == limit, Held: held}, next, err
}

// retentionRun is the meta row holding the current retention run.
const retentionRun = "retention-run"

// RetentionRun reads the current retention run; a zero one when none was
// saved.
func (s *RetentionStore) RetentionRun(ctx context.Context) (retention.Run, error) {
	var run retention.Run
	var v []byte
	err := s.reader().queryRow(ctx, `SELECT value FROM meta WHERE name = ?`, retentionRun).Scan(&v)
	if errors.Is(err, herald.ErrNotFound) {
		return run, nil
	}
	if err != nil {
		return run, err
	}
	return run, json.Unmarshal(v, &run)
}

// SaveRetentionRun stores the current retention run.
func (s *RetentionStore) SaveRetentionRun(ctx context.Context, run retention.Run) error {
	v, err := json.Marshal(run)
	if err != nil {
		return err
	}
	return s.inTxWith(ctx, TxOptions{Bulk: true}, func(c conn) error {
		_, err := c.exec(ctx, `INSERT INTO meta (name, value, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
			retentionRun, v, s.Now().UnixMilli())
		return err
	})
}
