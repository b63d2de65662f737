package sqlstore

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/heraldpush/herald"
)

// Pushes returns a page of an app's pushes with their counts.
func (s *PushStore) Pushes(ctx context.Context, appID string, f herald.PushFilter) ([]herald.Push, string, error) {
	if f.Limit < 1 {
		return nil, "", herald.Invalid(herald.Detail{Field: "limit", Reason: "must be at least 1"})
	}
	where, args := `app_id = ?`, []any{appID}
	if f.RequestGroupID != "" {
		where, args = where+` AND request_group_id = ?`, append(args, f.RequestGroupID)
	}
	if f.Status != "" {
		where, args = where+` AND status = ?`, append(args, f.Status)
	}
	order := `id DESC`
	if f.Scheduled {
		where, order = where+` AND status = 'scheduled'`, `scheduled_at, id`
		if f.Cursor != "" {
			// The cursor of a scheduled list is "<scheduled_at ms>.<id>".
			at, id, ok := cutCursor(f.Cursor)
			if !ok {
				return nil, "", herald.Invalid(herald.Detail{Field: "cursor", Reason: "is not a cursor this list gave"})
			}
			where, args = where+` AND (scheduled_at > ? OR (scheduled_at = ? AND id > ?))`, append(args, at, at, id)
		}
	} else if f.Cursor != "" {
		// The cursor of the history list is the last push's id.
		if !isPushID(f.Cursor) {
			return nil, "", herald.Invalid(herald.Detail{Field: "cursor", Reason: "is not a cursor this list gave"})
		}
		where, args = where+` AND id < ?`, append(args, f.Cursor)
	}
	r := s.reader()
	ps, err := queryPushes(ctx, r, `SELECT `+pushColumns+` FROM pushes WHERE `+where+` ORDER BY `+order+` LIMIT ?`,
		append(args, f.Limit+1)...)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(ps) > f.Limit {
		ps = ps[:f.Limit]
		last := ps[len(ps)-1]
		next = last.ID
		if f.Scheduled {
			next = strconv.FormatInt(last.ScheduledAt.UnixMilli(), 10) + "." + last.ID
		}
	}
	return ps, next, fillAllCounts(ctx, r, ps)
}

// isPushID reports whether s has the form of a push id: "push_" and 22
// base62 characters (herald.NewID).
func isPushID(s string) bool {
	const prefix, n = "push_", 22
	if len(s) != len(prefix)+n || s[:len(prefix)] != prefix {
		return false
	}
	for _, c := range []byte(s[len(prefix):]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

func cutCursor(c string) (int64, string, bool) {
	for i := range len(c) {
		if c[i] == '.' {
			at, err := strconv.ParseInt(c[:i], 10, 64)
			return at, c[i+1:], err == nil
		}
	}
	return 0, "", false
}

// PushGroup returns the pushes sharing a requestGroupId, oldest first.
func (s *PushStore) PushGroup(ctx context.Context, appID, requestGroupID string) ([]herald.Push, error) {
	r := s.reader()
	ps, err := queryPushes(ctx, r, `SELECT `+pushColumns+` FROM pushes WHERE app_id = ? AND request_group_id = ? ORDER BY id`,
		appID, requestGroupID)
	if err != nil {
		return nil, err
	}
	return ps, fillAllCounts(ctx, r, ps)
}

func queryPushes(ctx context.Context, c conn, query string, args ...any) ([]herald.Push, error) {
	var ps []herald.Push
	err := c.each(ctx, func(row scanner) error {
		p, err := scanPush(row)
		ps = append(ps, p)
		return err
	}, query, args...)
	return ps, err
}

func fillAllCounts(ctx context.Context, c conn, ps []herald.Push) error {
	for i := range ps {
		if err := fillCounts(ctx, c, &ps[i]); err != nil {
			return err
		}
	}
	return nil
}

// UnreachableUsersOf returns the users a push could not reach.
func (s *PushStore) UnreachableUsersOf(ctx context.Context, pushID string) ([]herald.Unreachable, error) {
	out := []herald.Unreachable{}
	err := s.reader().each(ctx, func(row scanner) error {
		var u herald.Unreachable
		err := row.Scan(&u.UserID, &u.Reason)
		out = append(out, u)
		return err
	}, `SELECT user_id, reason FROM unreachable WHERE push_id = ? ORDER BY user_id`, pushID)
	return out, err
}

// Failures returns a push's failed deliveries, tokens shortened: its rows
// that failed, and when the push failed the slots it left unsent.
func (s *PushStore) Failures(ctx context.Context, pushID string) ([]herald.Failure, error) {
	ds, err := s.rows(ctx, `push_id = ? AND state IN ('failed', 'undeliverable')`, pushID)
	if err != nil {
		return nil, err
	}
	unsent, err := s.slotDeliveries(ctx, pushID, `push_id = ? AND failed = TRUE AND settled < size`, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	for _, d := range unsent {
		if d.State == herald.DeliveryFailed {
			ds = append(ds, d)
		}
	}
	slices.SortFunc(ds, bySeq)
	out := make([]herald.Failure, len(ds))
	for i, d := range ds {
		msg := d.Error
		if d.Reason != "" {
			msg = d.Reason + ": " + msg
		}
		out[i] = herald.Failure{UserID: d.UserID, Token: herald.TokenSuffix(d.Token), Error: msg}
	}
	return out, nil
}

// Usage returns an app's charges per day between from and to.
func (s *PushStore) Usage(ctx context.Context, appID, from, to string) ([]herald.DayUsage, error) {
	out := []herald.DayUsage{}
	err := s.reader().each(ctx, func(row scanner) error {
		var d herald.DayUsage
		err := row.Scan(&d.Date, &d.Half)
		out = append(out, d)
		return err
	}, `SELECT day, CAST(SUM(half_units) AS BIGINT) FROM usage WHERE app_id = ? AND day BETWEEN ? AND ?
		GROUP BY day ORDER BY day`, appID, from, to)
	return out, err
}

// windowPushes selects, as a condition on push_id, the pushes an app
// created in a window: its arguments are the app id, from and to.
// windowLive and windowExpired are those kept and those expired, whose
// counts were kept (keptCounts) while their rows go.
const (
	windowPushes  = `push_id IN (SELECT id FROM pushes WHERE app_id = ? AND created_at >= ? AND created_at <= ?)`
	windowLive    = `push_id IN (SELECT id FROM pushes WHERE app_id = ? AND created_at >= ? AND created_at <= ? AND expired_at IS NULL)`
	windowExpired = `push_id IN (SELECT id FROM pushes WHERE app_id = ? AND created_at >= ? AND created_at <= ? AND expired_at IS NOT NULL)`
)

// PushTotals sums the pushes an app created from from to to: their
// number and requested users from the pushes, their counts as one push's
// are counted (sumCounts, or keptCounts once expired), their charge from the usage kept for them,
// refunds deducted.
func (s *PushStore) PushTotals(ctx context.Context, appID string, from, to time.Time) (herald.PushTotals, error) {
	t := herald.PushTotals{From: from, To: to}
	r, args := s.reader(), []any{appID, from.UnixMilli(), to.UnixMilli()}
	err := r.queryRow(ctx, `SELECT COUNT(*), CAST(COALESCE(SUM(requested_users), 0) AS BIGINT),
		CAST(COALESCE(SUM(events_received), 0) AS BIGINT), CAST(COALESCE(SUM(events_opened), 0) AS BIGINT)
		FROM pushes WHERE app_id = ? AND created_at >= ? AND created_at <= ?`, args...).
		Scan(&t.Pushes, &t.Counts.RequestedUsers, &t.Counts.Received, &t.Counts.Opened)
	if err != nil {
		return t, err
	}
	if err := sumCounts(ctx, r, &t.Counts, windowLive, args...); err != nil {
		return t, err
	}
	if err := keptCounts(ctx, r, &t.Counts, windowExpired, args...); err != nil {
		return t, err
	}
	err = r.queryRow(ctx, `SELECT CAST(COALESCE(SUM(half_units), 0) AS BIGINT) FROM usage WHERE app_id = ? AND `+windowPushes,
		append([]any{appID}, args...)...).Scan(&t.ServerActionsHalf)
	return t, err
}

// PushQuartersSQL sums the pushes an app created from..to (its arguments:
// the app id, from and to in Unix milliseconds) by quarter of an hour
// since the epoch (herald.Quarter): their sent messages counted as
// sumCounts counts them, or as keptCounts once expired, and their
// received and opened. It reads the window from pushes_app_created and
// each push's chunks, sent deliveries or kept counts by its id.
const PushQuartersSQL = `SELECT created_at / 900000,
	CAST(SUM(CASE WHEN expired_at IS NULL
		THEN (SELECT COALESCE(SUM(c.sent), 0) FROM push_chunks c WHERE c.push_id = p.id)
			+ (SELECT COUNT(*) FROM deliveries d WHERE d.push_id = p.id AND d.state = 'sent')
		ELSE (SELECT COALESCE(SUM(k.sent), 0) FROM push_counts k WHERE k.push_id = p.id) END) AS BIGINT),
	CAST(SUM(events_received) AS BIGINT), CAST(SUM(events_opened) AS BIGINT)
	FROM pushes p WHERE app_id = ? AND created_at >= ? AND created_at <= ?
	GROUP BY created_at / 900000 ORDER BY created_at / 900000`

// PushQuarters sums the pushes an app created from..to by the quarter of
// an hour they were created in (PushQuartersSQL).
func (s *PushStore) PushQuarters(ctx context.Context, appID string, from, to time.Time) ([]herald.QuarterCounts, error) {
	var out []herald.QuarterCounts
	err := s.reader().each(ctx, func(row scanner) error {
		var q herald.QuarterCounts
		var quarter int64
		err := row.Scan(&quarter, &q.Sent, &q.Received, &q.Opened)
		q.Start = time.UnixMilli(quarter * herald.Quarter.Milliseconds()).UTC()
		out = append(out, q)
		return err
	}, PushQuartersSQL, appID, from.UnixMilli(), to.UnixMilli())
	return out, err
}
