package sqlstore

import (
	"context"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/identity"
)

// CreateSession records a dashboard session, and forgets the sessions that
// have ended.
func (s *OperatorStore) CreateSession(ctx context.Context, sess identity.Session) error {
	now := s.Now()
	return s.inTx(ctx, func(c conn) error {
		if _, err := c.exec(ctx, `DELETE FROM sessions WHERE started_at <= ? OR last_seen_at <= ?`,
			now.Add(-identity.SessionLifetime).UnixMilli(), now.Add(-identity.SessionIdle).UnixMilli()); err != nil {
			return err
		}
		_, err := c.exec(ctx, `INSERT INTO sessions (id, operator_id, started_at, last_seen_at, awaiting_totp)
			VALUES (?, ?, ?, ?, ?)`, sess.ID, sess.OperatorID, sess.Started.UnixMilli(), sess.LastSeen.UnixMilli(), sess.AwaitingTOTP)
		return err
	})
}

// Session returns a session and, for an operator's, the operator; the
// session of a disabled or deleted operator is herald.ErrNotFound.
func (s *OperatorStore) Session(ctx context.Context, id string) (identity.Session, herald.Operator, error) {
	sess := identity.Session{ID: id}
	var started, seen int64
	c := s.reader()
	if err := c.queryRow(ctx, `SELECT operator_id, started_at, last_seen_at, awaiting_totp FROM sessions WHERE id = ?`, id).
		Scan(&sess.OperatorID, &started, &seen, &sess.AwaitingTOTP); err != nil {
		return sess, herald.Operator{}, err
	}
	sess.Started, sess.LastSeen = time.UnixMilli(started).UTC(), time.UnixMilli(seen).UTC()
	if sess.OperatorID == herald.OwnerID {
		return sess, herald.Owner(), nil
	}
	o, err := operatorByID(ctx, c, sess.OperatorID)
	if err == nil && o.Disabled {
		err = herald.ErrNotFound
	}
	return sess, o, err
}

// TouchSession records that a session, and its operator, were seen at at;
// verified ends an AwaitingTOTP session's wait.
func (s *OperatorStore) TouchSession(ctx context.Context, id string, at time.Time, verified bool) error {
	return s.inTx(ctx, func(c conn) error {
		var operator string
		if err := c.queryRow(ctx, `SELECT operator_id FROM sessions WHERE id = ?`, id).Scan(&operator); err != nil {
			return err
		}
		stmts := []Stmt{{Query: `UPDATE sessions SET last_seen_at = ? WHERE id = ?`, Args: []any{at.UnixMilli(), id}},
			{Query: `UPDATE operators SET last_seen_at = ? WHERE id = ?`, Args: []any{at.UnixMilli(), operator}}}
		if verified {
			stmts = append(stmts, Stmt{Query: `UPDATE sessions SET awaiting_totp = ? WHERE id = ?`, Args: []any{false, id}})
		}
		return c.pipeline(ctx, stmts...)
	})
}

// DeleteSession ends a session; ending an unknown one is no error.
func (s *OperatorStore) DeleteSession(ctx context.Context, id string) error {
	return s.inTx(ctx, func(c conn) error {
		_, err := c.exec(ctx, `DELETE FROM sessions WHERE id = ?`, id)
		return err
	})
}
