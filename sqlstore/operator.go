package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/identity"
)

const operatorColumns = `id, email, name, role, apps, disabled, totp IS NOT NULL, created_at, last_seen_at`

func scanOperator(row scanner, extra ...any) (herald.Operator, error) {
	var o herald.Operator
	var role string
	var apps sql.NullString
	var created int64
	var seen sql.NullInt64
	err := row.Scan(append([]any{&o.ID, &o.Email, &o.Name, &role, &apps, &o.Disabled, &o.TOTP, &created, &seen}, extra...)...)
	if err != nil {
		return o, err
	}
	if err := o.Role.UnmarshalText([]byte(role)); err != nil {
		return o, err
	}
	if apps.Valid {
		o.Apps = []string{}
		if err := json.Unmarshal([]byte(apps.String), &o.Apps); err != nil {
			return o, err
		}
	}
	o.CreatedAt = time.UnixMilli(created).UTC()
	if seen.Valid {
		o.LastSeenAt = time.UnixMilli(seen.Int64).UTC()
	}
	return o, nil
}

// appsColumn is the apps column's value: NULL for every app, else a JSON
// array.
func appsColumn(apps []string) any {
	if apps == nil {
		return nil
	}
	b, _ := json.Marshal(apps)
	return string(b)
}

func operatorByID(ctx context.Context, c conn, id string) (herald.Operator, error) {
	return scanOperator(c.queryRow(ctx, `SELECT `+operatorColumns+` FROM operators WHERE id = ?`, id))
}

// CreateOperator stores a new operator with its first setup link.
func (s *OperatorStore) CreateOperator(ctx context.Context, o herald.Operator, link identity.SetupLink) error {
	err := s.inTx(ctx, func(c conn) error {
		if _, err := c.exec(ctx, `INSERT INTO operators (id, email, email_key, name, role, apps, disabled, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, o.ID, o.Email, identity.EmailKey(o.Email), o.Name, o.Role.String(),
			appsColumn(o.Apps), o.Disabled, o.CreatedAt.UnixMilli()); err != nil {
			return err
		}
		return insertSetupLink(ctx, c, link)
	})
	if errors.Is(err, ErrUnique) {
		return herald.ErrOperatorExists
	}
	return err
}

// Operators lists every operator by email.
func (s *OperatorStore) Operators(ctx context.Context) ([]herald.Operator, error) {
	out := []herald.Operator{}
	err := s.reader().each(ctx, func(r scanner) error {
		o, err := scanOperator(r)
		out = append(out, o)
		return err
	}, `SELECT `+operatorColumns+` FROM operators ORDER BY email_key`)
	return out, err
}

// Operator returns one operator, or herald.ErrNotFound.
func (s *OperatorStore) Operator(ctx context.Context, id string) (herald.Operator, error) {
	return operatorByID(ctx, s.reader(), id)
}

// OperatorByEmail finds an operator by email, whatever the case of its
// ASCII letters (identity.EmailKey), with its secrets. An email whose local
// part is not ASCII names no one (identity.MatchableEmail).
func (s *OperatorStore) OperatorByEmail(ctx context.Context, email string) (herald.Operator, identity.OperatorSecrets, error) {
	var sec identity.OperatorSecrets
	if !identity.MatchableEmail(email) {
		return herald.Operator{}, sec, herald.ErrNotFound
	}
	o, err := scanOperator(s.reader().queryRow(ctx, `SELECT `+operatorColumns+`, password_hash, totp, pending_totp
		FROM operators WHERE email_key = ?`, identity.EmailKey(email)), &sec.PasswordHash, &sec.TOTP, &sec.PendingTOTP)
	return o, sec, err
}

// OperatorSecrets returns an operator's password hash and TOTP secrets.
func (s *OperatorStore) OperatorSecrets(ctx context.Context, id string) (identity.OperatorSecrets, error) {
	var sec identity.OperatorSecrets
	err := s.reader().queryRow(ctx, `SELECT password_hash, totp, pending_totp FROM operators WHERE id = ?`, id).
		Scan(&sec.PasswordHash, &sec.TOTP, &sec.PendingTOTP)
	return sec, err
}

// UpdateOperator applies c; disabling ends the operator's sessions,
// deletes its tokens and voids its setup links in the same transaction.
func (s *OperatorStore) UpdateOperator(ctx context.Context, id string, c identity.OperatorChange) (herald.Operator, error) {
	var o herald.Operator
	err := s.inTx(ctx, func(tx conn) error {
		var err error
		if o, err = operatorByID(ctx, tx, id); err != nil {
			return err
		}
		if c.Name != nil {
			o.Name = *c.Name
		}
		if c.Role != nil {
			o.Role = *c.Role
		}
		if c.Apps != nil {
			o.Apps = *c.Apps
		}
		if c.Disabled != nil {
			o.Disabled = *c.Disabled
		}
		if _, err := tx.exec(ctx, `UPDATE operators SET name = ?, role = ?, apps = ?, disabled = ? WHERE id = ?`,
			o.Name, o.Role.String(), appsColumn(o.Apps), o.Disabled, id); err != nil {
			return err
		}
		if o.Disabled {
			if err := endAccess(ctx, tx, id); err != nil {
				return err
			}
			_, err := tx.exec(ctx, `UPDATE setup_links SET used = ? WHERE operator_id = ?`, true, id)
			return err
		}
		return nil
	})
	return o, err
}

// endAccess ends an operator's sessions and deletes its tokens.
func endAccess(ctx context.Context, c conn, id string) error {
	return c.pipeline(ctx,
		Stmt{Query: `DELETE FROM sessions WHERE operator_id = ?`, Args: []any{id}},
		Stmt{Query: `DELETE FROM operator_tokens WHERE operator_id = ?`, Args: []any{id}})
}

// DeleteOperator deletes an operator with its sessions, tokens and links.
func (s *OperatorStore) DeleteOperator(ctx context.Context, id string) error {
	return s.inTx(ctx, func(c conn) error {
		if err := endAccess(ctx, c, id); err != nil {
			return err
		}
		if _, err := c.exec(ctx, `DELETE FROM setup_links WHERE operator_id = ?`, id); err != nil {
			return err
		}
		n, err := c.exec(ctx, `DELETE FROM operators WHERE id = ?`, id)
		if err == nil && n == 0 {
			err = herald.ErrNotFound
		}
		return err
	})
}

func insertSetupLink(ctx context.Context, c conn, l identity.SetupLink) error {
	_, err := c.exec(ctx, `INSERT INTO setup_links (token_hash, operator_id, expires_at) VALUES (?, ?, ?)`,
		l.TokenHash, l.OperatorID, l.Expires.UnixMilli())
	return err
}

// ReplaceSetupLink makes link the operator's only usable setup link: the
// others are marked used, so they answer as gone.
func (s *OperatorStore) ReplaceSetupLink(ctx context.Context, link identity.SetupLink) error {
	return s.inTx(ctx, func(c conn) error {
		if _, err := operatorByID(ctx, c, link.OperatorID); err != nil {
			return err
		}
		if _, err := c.exec(ctx, `UPDATE setup_links SET used = ? WHERE operator_id = ?`, true, link.OperatorID); err != nil {
			return err
		}
		return insertSetupLink(ctx, c, link)
	})
}

// SetupLink returns the operator a setup link belongs to.
func (s *OperatorStore) SetupLink(ctx context.Context, tokenHash string) (herald.Operator, error) {
	return setupLinkOperator(ctx, s.reader(), tokenHash, s.Now())
}

func setupLinkOperator(ctx context.Context, c conn, tokenHash string, now time.Time) (herald.Operator, error) {
	var id string
	var expires int64
	var used bool
	if err := c.queryRow(ctx, `SELECT operator_id, expires_at, used FROM setup_links WHERE token_hash = ?`, tokenHash).
		Scan(&id, &expires, &used); err != nil {
		return herald.Operator{}, err
	}
	if used || now.UnixMilli() >= expires {
		return herald.Operator{}, herald.ErrLinkGone
	}
	o, err := operatorByID(ctx, c, id)
	if err == nil && o.Disabled {
		return herald.Operator{}, herald.ErrLinkGone // disabling voids links; this one was made after
	}
	return o, err
}

// UseSetupLink uses the link up, sets the operator's password hash and
// ends the operator's sessions and API tokens, in one transaction. The
// link is spent by a guarded write (unused, unexpired, its operator
// enabled), so of concurrent requests with one link at most one sets a
// password; the others find it gone.
func (s *OperatorStore) UseSetupLink(ctx context.Context, tokenHash, passwordHash string) (herald.Operator, error) {
	var o herald.Operator
	err := s.inTx(ctx, func(c conn) error {
		n, err := c.exec(ctx, `UPDATE setup_links SET used = ? WHERE token_hash = ? AND used = ? AND expires_at > ?
			AND operator_id IN (SELECT id FROM operators WHERE disabled = ?)`, true, tokenHash, false, s.Now().UnixMilli(), false)
		if err != nil {
			return err
		}
		if n == 0 { // no such link (ErrNotFound), or used, expired or disabled (ErrLinkGone)
			if _, err := setupLinkOperator(ctx, c, tokenHash, s.Now()); err != nil {
				return err
			}
			return herald.ErrLinkGone
		}
		var id string
		if err := c.queryRow(ctx, `SELECT operator_id FROM setup_links WHERE token_hash = ?`, tokenHash).Scan(&id); err != nil {
			return err
		}
		if _, err := c.exec(ctx, `UPDATE operators SET password_hash = ? WHERE id = ?`, passwordHash, id); err != nil {
			return err
		}
		if err := endAccess(ctx, c, id); err != nil {
			return err
		}
		o, err = operatorByID(ctx, c, id)
		return err
	})
	return o, err
}

// SetPendingTOTP keeps a TOTP secret issued but not yet confirmed.
func (s *OperatorStore) SetPendingTOTP(ctx context.Context, operatorID string, sealed []byte) error {
	return s.updateOperator(ctx, operatorID, `UPDATE operators SET pending_totp = ? WHERE id = ?`, sealed, operatorID)
}

// ConfirmTOTP makes the pending secret the enrolled one.
func (s *OperatorStore) ConfirmTOTP(ctx context.Context, operatorID string) error {
	return s.updateOperator(ctx, operatorID, `UPDATE operators SET totp = pending_totp, pending_totp = NULL
		WHERE id = ? AND pending_totp IS NOT NULL`, operatorID)
}

// ResetTOTP removes both TOTP secrets.
func (s *OperatorStore) ResetTOTP(ctx context.Context, operatorID string) error {
	return s.updateOperator(ctx, operatorID, `UPDATE operators SET totp = NULL, pending_totp = NULL WHERE id = ?`, operatorID)
}

// updateOperator runs one update of an operator's row; herald.ErrNotFound
// when it changed none.
func (s *OperatorStore) updateOperator(ctx context.Context, id, query string, args ...any) error {
	return s.inTx(ctx, func(c conn) error {
		n, err := c.exec(ctx, query, args...)
		if err == nil && n == 0 {
			err = herald.ErrNotFound
		}
		return err
	})
}

// CreateOperatorToken stores an API token of an enabled operator.
func (s *OperatorStore) CreateOperatorToken(ctx context.Context, t identity.OperatorToken) error {
	return s.inTx(ctx, func(c conn) error {
		o, err := operatorByID(ctx, c, t.OperatorID)
		if err != nil {
			return err
		}
		if o.Disabled {
			return herald.ErrNotFound
		}
		_, err = c.exec(ctx, `INSERT INTO operator_tokens (id, operator_id, name, hash, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?)`, t.ID, t.OperatorID, t.Name, t.Hash, t.CreatedAt.UnixMilli(), t.ExpiresAt.UnixMilli())
		return err
	})
}

// OperatorTokens lists an operator's unexpired tokens, newest first.
func (s *OperatorStore) OperatorTokens(ctx context.Context, operatorID string) ([]identity.OperatorToken, error) {
	out := []identity.OperatorToken{}
	err := s.reader().each(ctx, func(r scanner) error {
		t := identity.OperatorToken{OperatorID: operatorID}
		var created, expires int64
		err := r.Scan(&t.ID, &t.Name, &created, &expires)
		t.CreatedAt, t.ExpiresAt = time.UnixMilli(created).UTC(), time.UnixMilli(expires).UTC()
		out = append(out, t)
		return err
	}, `SELECT id, name, created_at, expires_at FROM operator_tokens
		WHERE operator_id = ? AND expires_at > ? ORDER BY created_at DESC, id DESC`, operatorID, s.Now().UnixMilli())
	return out, err
}

// DeleteOperatorToken revokes one of an operator's tokens.
func (s *OperatorStore) DeleteOperatorToken(ctx context.Context, operatorID, tokenID string) error {
	return s.updateOperator(ctx, operatorID, `DELETE FROM operator_tokens WHERE operator_id = ? AND id = ?`, operatorID, tokenID)
}

// OperatorByToken finds the enabled operator of an unexpired token by the
// token's hash.
func (s *OperatorStore) OperatorByToken(ctx context.Context, hash string) (herald.Operator, error) {
	o, err := scanOperator(s.reader().queryRow(ctx, `SELECT o.`+strings.ReplaceAll(operatorColumns, ", ", ", o.")+`
		FROM operator_tokens t JOIN operators o ON o.id = t.operator_id
		WHERE t.hash = ? AND t.expires_at > ? AND o.disabled = ?`, hash, s.Now().UnixMilli(), false))
	return o, err
}
