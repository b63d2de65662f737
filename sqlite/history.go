package sqlite

import (
	"context"
	"strconv"

	"github.com/heraldpush/herald"
)

// Pushes returns a page of an app's pushes with their counts.
func (db *DB) Pushes(ctx context.Context, appID string, f herald.PushFilter) ([]herald.Push, string, error) {
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
		where, args = where+` AND id < ?`, append(args, f.Cursor)
	}
	ps, err := db.queryPushes(ctx, `SELECT `+pushColumns+` FROM pushes WHERE `+where+` ORDER BY `+order+` LIMIT ?`,
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
	return ps, next, db.fillAllCounts(ctx, ps)
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
func (db *DB) PushGroup(ctx context.Context, appID, requestGroupID string) ([]herald.Push, error) {
	ps, err := db.queryPushes(ctx, `SELECT `+pushColumns+` FROM pushes WHERE app_id = ? AND request_group_id = ? ORDER BY id`,
		appID, requestGroupID)
	if err != nil {
		return nil, err
	}
	return ps, db.fillAllCounts(ctx, ps)
}

func (db *DB) queryPushes(ctx context.Context, query string, args ...any) ([]herald.Push, error) {
	rows, err := db.Reader.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ps []herald.Push
	for rows.Next() {
		p, err := scanPush(rows)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, rows.Err()
}

func (db *DB) fillAllCounts(ctx context.Context, ps []herald.Push) error {
	for i := range ps {
		if err := db.fillCounts(ctx, &ps[i]); err != nil {
			return err
		}
	}
	return nil
}

// UnreachableUsersOf returns the users a push could not reach.
func (db *DB) UnreachableUsersOf(ctx context.Context, pushID string) ([]herald.Unreachable, error) {
	rows, err := db.Reader.QueryContext(ctx, `SELECT user_id, reason FROM unreachable WHERE push_id = ? ORDER BY user_id`, pushID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []herald.Unreachable{}
	for rows.Next() {
		var u herald.Unreachable
		if err := rows.Scan(&u.UserID, &u.Reason); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// Failures returns a push's failed deliveries, tokens shortened.
func (db *DB) Failures(ctx context.Context, pushID string) ([]herald.Failure, error) {
	ds, err := db.deliveries(ctx, `push_id = ? AND state IN ('failed', 'undeliverable')`, pushID)
	if err != nil {
		return nil, err
	}
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
func (db *DB) Usage(ctx context.Context, appID, from, to string) ([]herald.DayUsage, error) {
	rows, err := db.Reader.QueryContext(ctx, `SELECT day, SUM(half_units) FROM usage WHERE app_id = ? AND day BETWEEN ? AND ?
		GROUP BY day ORDER BY day`, appID, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []herald.DayUsage{}
	for rows.Next() {
		var d herald.DayUsage
		if err := rows.Scan(&d.Date, &d.Half); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}
