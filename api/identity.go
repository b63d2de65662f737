package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/request"
)

// identityTokenMember is the body member that carries an SDK call's
// identity token (see herald.IdentityProof).
const identityTokenMember = "identityToken"

// identityProof returns what an SDK call that binds a userId must verify
// against, nil when the app's identity verification is off. The app the
// request authenticated as may come from the cache (appCache), which is
// trusted for "off": turning verification on takes effect within the
// cache's second. An app cached with it on is read again, so that turning
// it off and, above all, a rotated secret take effect at once.
func (s *server) identityProof(r *http.Request, o request.Object) (*herald.IdentityProof, error) {
	app := appFrom(r.Context())
	if !app.IdentityVerification {
		return nil, nil
	}
	app, err := s.store.App(r.Context(), app.ID)
	if err != nil {
		return nil, s.sdkError(r, err)
	}
	if !app.IdentityVerification {
		return nil, nil
	}
	proof := &herald.IdentityProof{}
	if raw, ok := o.Raw(identityTokenMember); ok {
		_ = json.Unmarshal(raw, &proof.Token) // anything but a string is no token: refused below
	}
	if len(app.IdentitySecret) == 0 {
		return proof, nil
	}
	if s.masterKey == nil {
		return nil, errors.New("identity verification is on but the public API has no master key")
	}
	secret, err := s.masterKey.Open(app.IdentitySecret)
	if err != nil {
		return nil, fmt.Errorf("app %s: identity secret: %w", app.ID, err)
	}
	proof.Secret = string(secret)
	if len(app.PreviousIdentitySecret) > 0 && s.now().Before(app.IdentityRotatedAt.Add(herald.IdentityRotationGrace)) {
		previous, err := s.masterKey.Open(app.PreviousIdentitySecret)
		if err != nil {
			return nil, fmt.Errorf("app %s: previous identity secret: %w", app.ID, err)
		}
		proof.Previous = string(previous)
	}
	return proof, nil
}

// checkIdentity refuses a call binding userID whose token does not verify
// it, when the app's identity verification is on.
func (s *server) checkIdentity(r *http.Request, o request.Object, userID string) error {
	proof, err := s.identityProof(r, o)
	if err != nil || proof == nil || proof.Verifies(userID) {
		return err
	}
	return s.refuseIdentity(r)
}

// refuseIdentity counts a refused identity token for the request's app and
// returns the refusal. A count the store could not make answers the
// store's error instead (503): the count must hold every refusal.
func (s *server) refuseIdentity(r *http.Request) error {
	if err := s.store.CountIdentityRefusal(r.Context(), appFrom(r.Context()).ID); err != nil {
		return s.sdkError(r, err)
	}
	return herald.ErrIdentityRefused
}
