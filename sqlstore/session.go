package sqlstore

import (
	"context"
	"time"
)

// CreateSession records a dashboard session that ends at expires, and
// forgets the sessions that have ended.
func (s *Store) CreateSession(ctx context.Context, id string, expires time.Time) error {
	return s.inTx(ctx, func(c conn) error {
		if _, err := c.exec(ctx, `DELETE FROM sessions WHERE expires_at <= ?`, s.Now().UnixMilli()); err != nil {
			return err
		}
		_, err := c.exec(ctx, `INSERT INTO sessions (id, expires_at) VALUES (?, ?)
			ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at`, id, expires.UnixMilli())
		return err
	})
}

// SessionExpires returns when a session ends; herald.ErrNotFound when there
// is none (never made, or signed out).
func (s *Store) SessionExpires(ctx context.Context, id string) (time.Time, error) {
	var ms int64
	if err := s.reader().queryRow(ctx, `SELECT expires_at FROM sessions WHERE id = ?`, id).Scan(&ms); err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(ms).UTC(), nil
}

// DeleteSession ends a session; ending an unknown one is no error.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	return s.inTx(ctx, func(c conn) error {
		_, err := c.exec(ctx, `DELETE FROM sessions WHERE id = ?`, id)
		return err
	})
}
