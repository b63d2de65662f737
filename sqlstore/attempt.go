package sqlstore

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/heraldpush/herald/identity"
)

// countAttempt is the upsert that counts an attempt and returns the key's
// window as it is after it: a window that has ended starts again at this
// attempt. The row is locked until the transaction ends (PostgreSQL) or
// the writer is the only one (SQLite), so each attempt sees every attempt
// counted before it: no read then write.
const countAttempt = `INSERT INTO attempts (key, started_at, attempts, free) VALUES (?, ?, 1, ?)
	ON CONFLICT (key) DO UPDATE SET
		attempts = CASE WHEN attempts.started_at <= ? THEN 1 ELSE attempts.attempts + 1 END,
		free = excluded.free,
		started_at = CASE WHEN attempts.started_at <= ? THEN excluded.started_at ELSE attempts.started_at END
	RETURNING attempts, started_at`

// keepEnded keeps, before a key's window is started again, the count of
// the ended window's attempts that no request's record covers, for its
// aggregated record. Two attempts that both see the ended window keep it
// once (the primary key).
const keepEnded = `INSERT INTO attempt_windows (key, started_at, count)
	SELECT key, started_at, attempts - free FROM attempts WHERE key = ? AND started_at <= ? AND attempts > free
	ON CONFLICT (key, started_at) DO NOTHING`

// CountAttempt counts an attempt under each key and decides it (see
// identity.AttemptStore). Keys are counted in sorted order, so two attempts
// never wait for each other's rows crosswise.
func (s *OperatorStore) CountAttempt(ctx context.Context, keys []string, free int, at time.Time) (identity.Attempt, error) {
	keys = slices.Sorted(slices.Values(keys))
	keys = slices.Compact(keys)
	var a identity.Attempt
	err := s.inTxRetry(ctx, false, func(c conn) error {
		a = identity.Attempt{Keys: keys, Windows: make([]time.Time, len(keys))}
		ended := at.Add(-identity.AttemptWindow).UnixMilli()
		admitted := make([]bool, len(keys))
		for i, k := range keys {
			if _, err := c.exec(ctx, keepEnded, k, ended); err != nil {
				return err
			}
			var n int
			var started int64
			if err := c.queryRow(ctx, countAttempt, k, at.UnixMilli(), free, ended, ended).Scan(&n, &started); err != nil {
				return err
			}
			a.Windows[i] = time.UnixMilli(started).UTC()
			if admitted[i] = n <= identity.AttemptLimit; !admitted[i] {
				a.Wait = max(a.Wait, a.Windows[i].Add(identity.AttemptWindow).Sub(at))
			}
		}
		if !a.Refused() {
			return nil
		}
		// A refused attempt counts only under the keys that refused it:
		// a stranger held back by their address does not spend the
		// typed email's attempts.
		var stmts []Stmt
		for i, k := range keys {
			if admitted[i] {
				stmts = append(stmts, uncount(k, a.Windows[i]))
			}
		}
		return c.pipeline(ctx, stmts...)
	})
	if a.Refused() {
		a.Wait = max(a.Wait, time.Millisecond)
	}
	return a, err
}

// uncount takes an attempt back from key's window started at started, if
// that window is still the key's.
func uncount(key string, started time.Time) Stmt {
	return Stmt{Query: `UPDATE attempts SET attempts = attempts - 1 WHERE key = ? AND started_at = ? AND attempts > 0`,
		Args: []any{key, started.UnixMilli()}}
}

// Forgive takes back an attempt that succeeded.
func (s *OperatorStore) Forgive(ctx context.Context, a identity.Attempt) error {
	if len(a.Keys) == 0 {
		return nil
	}
	return s.inTx(ctx, func(c conn) error {
		stmts := make([]Stmt, len(a.Keys))
		for i, k := range a.Keys {
			stmts[i] = uncount(k, a.Windows[i])
		}
		return c.pipeline(ctx, stmts...)
	})
}

// errStepUsed rolls back a TOTP step's use that came too late.
var errStepUsed = errors.New("totp step used")

// UseTOTPStep spends the operator's TOTP step and ends the session's wait
// in one transaction: the step's primary key decides between concurrent
// uses, on every node.
func (s *OperatorStore) UseTOTPStep(ctx context.Context, sessionID, operatorID string, step uint64, at time.Time) (bool, error) {
	err := s.inTx(ctx, func(c conn) error {
		if _, err := c.exec(ctx, `DELETE FROM totp_steps WHERE used_at < ?`, at.Add(-identity.AttemptWindow).UnixMilli()); err != nil {
			return err
		}
		n, err := c.exec(ctx, `INSERT INTO totp_steps (operator_id, step, used_at) VALUES (?, ?, ?)
			ON CONFLICT (operator_id, step) DO NOTHING`, operatorID, int64(step), at.UnixMilli())
		if err != nil {
			return err
		}
		if n == 0 {
			return errStepUsed
		}
		n, err = c.exec(ctx, `UPDATE sessions SET awaiting_totp = ?, last_seen_at = ? WHERE id = ? AND operator_id = ? AND awaiting_totp = ?`,
			false, at.UnixMilli(), sessionID, operatorID, true)
		if err != nil {
			return err
		}
		if n == 0 {
			return errStepUsed // the session no longer waits: keep the step unused
		}
		_, err = c.exec(ctx, `UPDATE operators SET last_seen_at = ? WHERE id = ?`, at.UnixMilli(), operatorID)
		return err
	})
	if errors.Is(err, errStepUsed) {
		return false, nil
	}
	return err == nil, err
}
