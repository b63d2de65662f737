package sqlstore

import (
	"context"
	"errors"
)

// BindOIDC binds the operator to (issuer, subject) at its first single
// sign-on, or checks the binding after, in one guarded write: the row
// changes only when it is unbound or bound to this very identity, so two
// first sign-ins with different subjects bind at most one. The unique
// index on (oidc_issuer, oidc_subject) refuses an identity another
// operator holds.
func (s *OperatorStore) BindOIDC(ctx context.Context, operatorID, issuer, subject string) (bool, error) {
	var n int64
	err := s.inTx(ctx, func(c conn) error {
		var err error
		n, err = c.exec(ctx, `UPDATE operators SET oidc_issuer = ?, oidc_subject = ?
			WHERE id = ? AND (oidc_subject IS NULL OR (oidc_issuer = ? AND oidc_subject = ?))`,
			issuer, subject, operatorID, issuer, subject)
		return err
	})
	if errors.Is(err, ErrUnique) {
		return false, nil
	}
	return n == 1, err
}
