package sqlstore

import (
	"context"
	"encoding/base64"
	"time"
	"unicode/utf8"

	"github.com/heraldpush/herald"
)

// Users returns a page of an app's users by userId. Both engines order
// user ids bytewise (PostgreSQL's column is COLLATE "C"), so a prefix is
// the range from itself to prefixEnd. The cursor is the base64url of the
// last user id of the page.
func (s *UserStore) Users(ctx context.Context, appID string, f herald.UserFilter) ([]herald.UserSummary, string, error) {
	if f.Limit < 1 {
		return nil, "", herald.Invalid(herald.Detail{Field: "limit", Reason: "must be at least 1"})
	}
	where, args := ` WHERE u.app_id = ?`, []any{appID}
	if f.Cursor != "" {
		after, err := base64.RawURLEncoding.DecodeString(f.Cursor)
		if err != nil || len(after) == 0 || !utf8.Valid(after) {
			return nil, "", herald.Invalid(herald.Detail{Field: "cursor", Reason: "is not a cursor this list gave"})
		}
		where, args = where+` AND u.user_id > ?`, append(args, string(after))
	}
	if f.Prefix != "" {
		where, args = where+` AND u.user_id >= ?`, append(args, f.Prefix)
		if end, ok := prefixEnd(f.Prefix); ok {
			where, args = where+` AND u.user_id < ?`, append(args, end)
		}
	}
	out := []herald.UserSummary{}
	err := s.reader().each(ctx, func(row scanner) error {
		var u herald.UserSummary
		var updated int64
		err := row.Scan(&u.ID, &u.State, &u.Consent.Marketing, &u.Consent.MarketingNight, &updated, &u.Devices)
		u.UpdatedAt = time.UnixMilli(updated).UTC()
		out = append(out, u)
		return err
	}, `SELECT u.user_id, u.state, u.marketing, u.marketing_night, u.updated_at,
		(SELECT COUNT(*) FROM devices d WHERE d.app_id = u.app_id AND d.user_id = u.user_id)
		FROM users u`+where+` ORDER BY u.user_id LIMIT ?`, append(args, f.Limit+1)...)
	if err != nil || len(out) <= f.Limit {
		return out, "", err
	}
	out = out[:f.Limit]
	return out, base64.RawURLEncoding.EncodeToString([]byte(out[len(out)-1].ID)), nil
}

// prefixEnd returns the least string after every string that starts with
// prefix, in the byte order of UTF-8 (which is code point order): prefix
// with its last character replaced by the next one. false when there is
// none (the prefix is all U+10FFFF).
func prefixEnd(prefix string) (string, bool) {
	rs := []rune(prefix)
	for i := len(rs) - 1; i >= 0; i-- {
		next := rs[i] + 1
		if next == 0xD800 { // surrogates are not characters
			next = 0xE000
		}
		if next <= utf8.MaxRune {
			return string(append(rs[:i:i], next)), true
		}
	}
	return "", false
}

// CountTargets counts the devices a topic or all-users push would reach
// now, as its fan-out groups them: the distinct users they are mapped to,
// and those mapped to none.
func (s *UserStore) CountTargets(ctx context.Context, appID, topic string) (users, unmapped int, err error) {
	where, args := `d.app_id = ?`, []any{appID}
	if topic != "" {
		where = where + ` AND EXISTS (SELECT 1 FROM device_topics t WHERE t.app_id = d.app_id AND t.device_id = d.device_id AND t.topic = ?)`
		args = append(args, topic)
	}
	err = s.reader().queryRow(ctx, `SELECT COUNT(DISTINCT d.user_id),
		CAST(COALESCE(SUM(CASE WHEN d.user_id IS NULL THEN 1 ELSE 0 END), 0) AS BIGINT) FROM devices d WHERE `+where, args...).
		Scan(&users, &unmapped)
	return users, unmapped, err
}
