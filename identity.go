package herald

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
	"time"
)

// Identity verification (DESIGN.md section 7) closes the SDK API's one
// gap: the API key is public, so without it any holder of the key could
// register a device as any userId (and receive that user's personal
// pushes) or change a user's consent from the app. With the app's
// IdentityVerification on, each SDK call that binds a device, or a consent
// change, to a userId carries identityToken: hex HMAC-SHA256 of the
// userId under the app's identity secret, which only the app's back end
// holds. Unbinding (userId null, deleting a device) and anonymous calls
// need none: they give no one a user.

// identitySecretPrefix and identitySecretLen are an identity secret's
// format: "hi_" and 40 base62 characters (238 bits).
const (
	identitySecretPrefix = "hi_"
	identitySecretLen    = 40
)

// NewIdentitySecret returns a fresh identity secret. The whole text,
// prefix included, is the HMAC key.
func NewIdentitySecret() string { return identitySecretPrefix + randomBase62(identitySecretLen) }

// IdentityToken returns the token a back end sends for userID: hex
// HMAC-SHA256 of the userId's UTF-8 bytes under the secret's text.
func IdentityToken(secret, userID string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(userID))
	return hex.EncodeToString(mac.Sum(nil))
}

// IdentityProof is what an SDK call presents for identity verification:
// the app's identity secret (opened) and the call's identityToken. A store
// given one checks it against the userId it finds on the device, in the
// transaction that makes the change (SetDeviceConsent).
type IdentityProof struct {
	Secret string
	// Previous is the secret a rotation replaced, while it still
	// verifies (IdentityRotationGrace); "" otherwise.
	Previous string
	Token    string
}

// IdentityRotationGrace is how long the secret a rotation replaced keeps
// verifying (DESIGN 7), so that the app's back ends can switch to the new
// one without refused calls.
const IdentityRotationGrace = 24 * time.Hour

// Verifies reports whether the proof's token is userID's under its
// secret, compared in constant time; never without a secret. Hex is read
// in either case.
func (p IdentityProof) Verifies(userID string) bool {
	got := []byte(strings.ToLower(p.Token))
	ok := false
	for _, secret := range []string{p.Secret, p.Previous} {
		if secret != "" && subtle.ConstantTimeCompare([]byte(IdentityToken(secret, userID)), got) == 1 {
			ok = true
		}
	}
	return ok
}

// ErrIdentityRefused answers an SDK call that binds a userId without a
// valid identityToken while the app's identity verification is on. The
// call changes nothing.
var ErrIdentityRefused = newError("ERR-AB-SDK-31", http.StatusUnauthorized, "Identity verification failed.").
	With(Detail{Field: "identityToken", Reason: "must be hex HMAC-SHA256 of the userId under the app's identity secret " +
		"(the app's identity verification is on)"})

// ReasonNoIdentitySecret refuses turning identity verification on for an
// app that has no identity secret yet: every binding call would fail.
const ReasonNoIdentitySecret = "needs an identity secret first: POST /admin/v1/apps/{appId}/identity-secret " +
	"(or the dashboard's app page) issues one"
