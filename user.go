package herald

import (
	"time"
)

// UserState is where an app user is in its life cycle.
type UserState string

// The user states of spec section 3.
const (
	UserRegistered UserState = "registered"
	UserWithdrawn  UserState = "withdrawn"
)

// User is an app user, registered through the SDK.
type User struct {
	AppID   string
	ID      string
	State   UserState
	Consent Consent
	// ConsentSet is true once the pair was set through the Server API; a
	// device mapped later adopts it.
	ConsentSet  bool
	CreatedAt   time.Time
	WithdrawnAt *time.Time
	// ConsentConfirmedAt is when marketing consent was last given or
	// confirmed for the user (see ConsentRecord.Confirms); nil when never,
	// or since the user withdrew.
	ConsentConfirmedAt *time.Time
}

// MaxUserIDLen bounds a userId, in characters.
const MaxUserIDLen = 255

// Withdrawn returns the user withdrawn at now: consent reset, no longer
// set through the Server API. Its devices are removed with it.
func (u User) Withdrawn(now time.Time) User {
	u.State, u.Consent, u.ConsentSet, u.WithdrawnAt = UserWithdrawn, Consent{}, false, &now
	u.ConsentConfirmedAt = nil
	return u
}

// WithConsent returns the user with the pair set through the Server API.
func (u User) WithConsent(c Consent) User {
	u.Consent, u.ConsentSet = c, true
	return u
}
