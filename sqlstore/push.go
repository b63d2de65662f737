package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/heraldpush/herald"
)

func ms(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}

func fromMS(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := time.UnixMilli(v.Int64).UTC()
	return &t
}

// AcceptPush stores a push with its recipients, job and ledger entries at once.
func (s *PushStore) AcceptPush(ctx context.Context, p herald.Push, rs []herald.Recipient, idem *herald.Idempotency, jobs ...herald.Job) (string, bool, error) {
	id, replayed := p.ID, false
	err := s.inTx(ctx, func(c conn) error {
		id, replayed = p.ID, false
		if idem != nil {
			prior, err := claimIdempotencyKey(ctx, c, p, idem)
			if err != nil || prior != "" {
				id, replayed = prior, prior != ""
				return err
			}
		}
		return insertPush(ctx, c, p, rs, jobs)
	})
	return id, replayed, err
}

// insertPush stores a push with its recipients, jobs (the first is the
// push's own) and ledger entries (its charge, as the domain decided it:
// Push.Ledger).
func insertPush(ctx context.Context, c conn, p herald.Push, rs []herald.Recipient, jobs []herald.Job) error {
	// The job first, for its id; then the push with its recipients and
	// its ledger entries in one pipeline: the fewer round trips, the
	// fewer an accept waits for (on PostgreSQL each waits for a core
	// while a fan-out runs).
	ids, err := c.insertJobs(ctx, jobs)
	if err != nil {
		return err
	}
	edits, _ := json.Marshal(p.Edits)
	stmts := make([]Stmt, 0, 1+len(p.Ledger))
	stmts = append(stmts, Stmt{Query: `INSERT INTO pushes (id, app_id, kind, topic, request_group_id, status, marketing, is_marketing_opt,
		title, content, link_url, image_url, badge, requested_users, server_actions_half, scheduled_at, created_at, edits,
		job_id, recipients, token, night_defer, ad_footer, ttl, filter, segment_id, localized, priority, approvals, local_time, spread_minutes)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, Args: []any{p.ID, p.AppID, p.Kind, p.Topic, p.RequestGroupID, p.Status,
		p.Marketing, p.IsMarketingOpt, p.Content.Title, p.Content.Content, p.Content.LinkURL, p.Content.ImageURL, p.Badge,
		p.RequestedUsers, p.ServerActionsHalf, ms(p.ScheduledAt), p.CreatedAt.UnixMilli(), string(edits), ids[0],
		encodeRecipients(rs), p.Token, p.NightPolicy == herald.NightDefer, p.AdFooter, p.TTL, nullText(p.Filter), nullText([]byte(p.SegmentID)), localizedColumn(p.Localized), priorityColumn(p.Priority),
		approvalsColumn(p.Approvals), p.LocalTime, p.SpreadMinutes}})
	for _, e := range p.Ledger {
		stmts = append(stmts, usageStmt(e))
	}
	return c.pipeline(ctx, stmts...)
}

// claimIdempotencyKey returns the push a key already stands for, or claims
// the key for p and returns "". The claim is an insert that does nothing on
// conflict, so of two requests with one key at once exactly one claims it;
// an expired key is taken over only if it is still the one that was read.
func claimIdempotencyKey(ctx context.Context, c conn, p herald.Push, idem *herald.Idempotency) (string, error) {
	// Keys live 24 hours; the app's expired ones go as new ones come.
	if _, err := c.exec(ctx, `DELETE FROM idempotency WHERE app_id = ? AND created_at <= ?`,
		p.AppID, p.CreatedAt.Add(-herald.IdempotencyWindow).UnixMilli()); err != nil {
		return "", err
	}
	n, err := c.exec(ctx, `INSERT INTO idempotency (app_id, key, request_hash, push_id, created_at) VALUES (?,?,?,?,?)
		ON CONFLICT (app_id, key) DO NOTHING`, p.AppID, idem.Key, idem.Hash, p.ID, p.CreatedAt.UnixMilli())
	if err != nil {
		return "", err
	}
	if n == 1 {
		return "", nil
	}
	stored, err := idempotencyRecord(ctx, c, p.AppID, idem.Key)
	if err != nil {
		return "", err
	}
	decision, err := herald.DecideIdempotency(stored, *idem, p.CreatedAt)
	if err != nil || decision == herald.IdempotencyReplay {
		return stored.PushID, err
	}
	return "", guard(c.exec(ctx, `UPDATE idempotency SET request_hash = ?, push_id = ?, created_at = ?
		WHERE app_id = ? AND key = ? AND created_at = ?`, idem.Hash, p.ID, p.CreatedAt.UnixMilli(),
		p.AppID, idem.Key, stored.CreatedAt.UnixMilli()))
}

// idempotencyRecord reads a stored key; nil when there is none.
func idempotencyRecord(ctx context.Context, c conn, appID, key string) (*herald.IdempotencyRecord, error) {
	var r herald.IdempotencyRecord
	var created int64
	err := c.queryRow(ctx, `SELECT request_hash, push_id, created_at FROM idempotency WHERE app_id = ? AND key = ?`,
		appID, key).Scan(&r.Hash, &r.PushID, &created)
	if errors.Is(err, herald.ErrNotFound) {
		return nil, nil
	}
	r.CreatedAt = time.UnixMilli(created)
	return &r, err
}

// IdempotentPush returns the push a recent idempotency key stands for.
func (s *PushStore) IdempotentPush(ctx context.Context, appID string, idem herald.Idempotency, now time.Time) (herald.Push, bool, error) {
	stored, err := idempotencyRecord(ctx, s.reader(), appID, idem.Key)
	if err != nil {
		return herald.Push{}, false, err
	}
	decision, err := herald.DecideIdempotency(stored, idem, now)
	if err != nil || decision != herald.IdempotencyReplay {
		return herald.Push{}, false, err
	}
	p, err := s.Push(ctx, stored.PushID)
	return p, err == nil, err
}

// insertUsage writes ledger entries, as given (the domain decides them:
// herald.App.PushCharge, Refund, DeferRefund); none is no statement.
func insertUsage(ctx context.Context, c conn, entries []herald.UsageEntry) error {
	if len(entries) == 0 {
		return nil
	}
	stmts := make([]Stmt, len(entries))
	for i, e := range entries {
		stmts[i] = usageStmt(e)
	}
	return c.pipeline(ctx, stmts...)
}

// usageStmt writes a ledger entry.
func usageStmt(e herald.UsageEntry) Stmt {
	return Stmt{Query: `INSERT INTO usage (app_id, push_id, day, half_units, created_at) VALUES (?,?,?,?,?)`,
		Args: []any{e.AppID, e.PushID, e.Day, e.Half, e.At.UnixMilli()}}
}

const pushColumns = `id, app_id, kind, topic, request_group_id, status, failure_reason, marketing, is_marketing_opt, title, content,
	link_url, image_url, badge, requested_users, server_actions_half, scheduled_at, created_at, started_at, finished_at, edits, token,
	night_defer, ad_footer, ttl, expired_at, filter, segment_id, localized, priority, approvals, local_time, late_local, spread_minutes, spread_users`

// scanPush reads pushColumns, then any extra columns into extra.
func scanPush(row scanner, extra ...any) (herald.Push, error) {
	var p herald.Push
	var scheduled, started, finished, expired sql.NullInt64
	var created int64
	var edits string
	var nightDefer bool
	var ttl sql.NullInt64
	var filter, segment, localized, approvals sql.NullString
	err := row.Scan(append([]any{&p.ID, &p.AppID, &p.Kind, &p.Topic, &p.RequestGroupID, &p.Status, &p.FailureReason, &p.Marketing,
		&p.IsMarketingOpt, &p.Content.Title, &p.Content.Content, &p.Content.LinkURL, &p.Content.ImageURL, &p.Badge,
		&p.RequestedUsers, &p.ServerActionsHalf, &scheduled, &created, &started, &finished, &edits, &p.Token, &nightDefer, &p.AdFooter, &ttl, &expired,
		&filter, &segment, &localized, &p.Priority, &approvals, &p.LocalTime, &p.Counts.LateLocal, &p.SpreadMinutes, &p.SpreadUsers},
		extra...)...)
	if err != nil {
		return p, err
	}
	if filter.Valid {
		p.Filter = json.RawMessage(filter.String)
	}
	p.SegmentID = segment.String
	if localized.Valid {
		if err := json.Unmarshal([]byte(localized.String), &p.Localized); err != nil {
			return p, err
		}
	}
	if approvals.Valid {
		if err := json.Unmarshal([]byte(approvals.String), &p.Approvals); err != nil {
			return p, err
		}
	}
	if nightDefer {
		p.NightPolicy = herald.NightDefer
	}
	if ttl.Valid {
		seconds := int(ttl.Int64)
		p.TTL = &seconds
	}
	p.ScheduledAt, p.StartedAt, p.FinishedAt, p.ExpiredAt = fromMS(scheduled), fromMS(started), fromMS(finished), fromMS(expired)
	p.CreatedAt = time.UnixMilli(created).UTC()
	p.Counts.RequestedUsers = p.RequestedUsers
	return p, json.Unmarshal([]byte(edits), &p.Edits)
}

// priorityColumn is a push's priority as its column keeps it: "normal"
// for none given.
func priorityColumn(p herald.Priority) herald.Priority {
	if p == "" {
		return herald.PriorityNormal
	}
	return p
}

// localizedColumn is a push's localized entries as their column keeps
// them: a JSON array, NULL for none.
func localizedColumn(l []herald.LocalizedEntry) any {
	if len(l) == 0 {
		return nil
	}
	b, _ := json.Marshal(l) // strings only: it cannot fail
	return string(b)
}

// approvalsColumn is a push's approval steps as their column keeps them:
// a JSON array, NULL for a push that did not wait for approval.
func approvalsColumn(a []herald.Approval) any {
	if len(a) == 0 {
		return nil
	}
	b, _ := json.Marshal(a) // strings and times only: it cannot fail
	return string(b)
}

// nullText is b as a nullable text column: NULL when empty.
func nullText(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// Push returns a push with its counts.
func (s *PushStore) Push(ctx context.Context, id string) (herald.Push, error) {
	p, err := s.PushRecord(ctx, id)
	if err != nil {
		return p, err
	}
	return p, fillCounts(ctx, s.reader(), &p)
}

// PushRecord returns a push without its counts.
func (s *PushStore) PushRecord(ctx context.Context, id string) (herald.Push, error) {
	return scanPush(s.reader().queryRow(ctx, `SELECT `+pushColumns+` FROM pushes WHERE id = ?`, id))
}

// fillCounts sets the counts of one push (sumCounts), what its devices
// reported (fillEventCounts) and its deferred part (fillDeferred).
func fillCounts(ctx context.Context, c conn, p *herald.Push) error {
	if p.ExpiredAt != nil { // its rows are gone or going: its counts were kept
		if err := keptCounts(ctx, c, &p.Counts, `push_id = ?`, p.ID); err != nil {
			return err
		}
		return fillEventCounts(ctx, c, p)
	}
	if err := sumCounts(ctx, c, &p.Counts, `push_id = ?`, p.ID); err != nil {
		return err
	}
	if err := fillEventCounts(ctx, c, p); err != nil {
		return err
	}
	if err := fillDeferred(ctx, c, p); err != nil {
		return err
	}
	return fillNextLocal(ctx, c, p)
}

// sumCounts adds to counts those that the chunks, delivery rows and
// unreachable users of the pushes the condition on push_id selects make.
// Each delivery is counted once: as a chunk's slot settled as sent (sent),
// as a slot not settled (failed with a failed push, else still to send),
// or as a row. A slot settled into a retry chunk is counted there. One
// push's counts and an app's totals (PushTotals) are counted alike.
func sumCounts(ctx context.Context, c conn, counts *herald.Counts, pushes string, args ...any) error {
	var sent, unsent, open, oldBadge, oldImage int
	err := c.queryRow(ctx, `SELECT CAST(COALESCE(SUM(sent), 0) AS BIGINT),
		CAST(COALESCE(SUM(CASE WHEN failed THEN size - settled ELSE 0 END), 0) AS BIGINT),
		CAST(COALESCE(SUM(CASE WHEN failed THEN 0 ELSE size - settled END), 0) AS BIGINT),
		CAST(COALESCE(SUM(sent_old_badge), 0) AS BIGINT), CAST(COALESCE(SUM(sent_old_image), 0) AS BIGINT)
		FROM push_chunks WHERE `+pushes, args...).Scan(&sent, &unsent, &open, &oldBadge, &oldImage)
	if err != nil {
		return err
	}
	counts.BadgeUnsupported += oldBadge
	counts.ImageUnsupported += oldImage
	counts.CountState(herald.DeliverySent, sent)
	counts.CountState(herald.DeliveryFailed, unsent)
	counts.CountState(herald.DeliveryPending, open)
	err = c.each(ctx, func(row scanner) error {
		var state herald.DeliveryState
		var n, oldBadge, oldImage int
		if err := row.Scan(&state, &n, &oldBadge, &oldImage); err != nil {
			return err
		}
		counts.CountState(state, n)
		if state == herald.DeliverySent {
			counts.BadgeUnsupported += oldBadge
			counts.ImageUnsupported += oldImage
		}
		return nil
	}, `SELECT state, COUNT(*), SUM(CASE WHEN old_for_badge THEN 1 ELSE 0 END), SUM(CASE WHEN old_for_image THEN 1 ELSE 0 END)
		FROM deliveries WHERE `+pushes+` GROUP BY state`, args...)
	if err != nil {
		return err
	}
	var unreachable int
	err = c.queryRow(ctx, `SELECT COUNT(*) FROM unreachable WHERE `+pushes, args...).Scan(&unreachable)
	counts.Unreachable += unreachable
	return err
}

func pushStatus(ctx context.Context, c conn, id string) (herald.PushStatus, error) {
	var status herald.PushStatus
	err := c.queryRow(ctx, `SELECT status FROM pushes WHERE id = ?`, id).Scan(&status)
	return status, err
}
