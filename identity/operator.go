package identity

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/heraldpush/herald"
)

// OperatorChange is a partial update of an operator; nil members stay.
type OperatorChange struct {
	Name *string
	Role *herald.Role
	// Apps, when set, replaces the operator's apps; a pointer to nil is
	// every app.
	Apps     *[]string
	Disabled *bool
}

// TokenHash is how a setup link's token and an operator's API token are
// stored (SetupLink.TokenHash, OperatorToken.Hash): hex SHA-256, never the
// token.
func TokenHash(token string) string { return hex.EncodeToString(herald.HashSecret(token)) }

// SetupLink lets an operator choose a password once (DESIGN 11). Only a
// hash of the link's token is stored (TokenHash).
type SetupLink struct {
	OperatorID string
	TokenHash  string
	Expires    time.Time
}

// OperatorToken is an operator's API token as stored: a hash, never the
// token.
type OperatorToken struct {
	ID         string
	OperatorID string
	Name       string
	Hash       string
	CreatedAt  time.Time
	ExpiresAt  time.Time
}

// MarshalJSON writes the token as the admin API lists it, without the
// token itself.
func (t OperatorToken) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		TokenID   string    `json:"tokenId"`
		Name      string    `json:"name"`
		CreatedAt time.Time `json:"createdAt"`
		ExpiresAt time.Time `json:"expiresAt"`
	}{t.ID, t.Name, t.CreatedAt.UTC(), t.ExpiresAt.UTC()})
}

// OperatorSecrets are what signing in checks: the argon2id hash of the
// password ("" before setup) and the TOTP secrets, sealed with the master
// key (nil when none).
type OperatorSecrets struct {
	PasswordHash string
	// TOTP is the enrolled secret; PendingTOTP one issued but not yet
	// confirmed by a code.
	TOTP, PendingTOTP []byte
}

// Session is a signed-in dashboard browser (DESIGN 11: it ends 30 minutes
// after it was last seen and 12 hours after it began).
type Session struct {
	// ID is a hash of the cookie's secret, never the cookie.
	ID string
	// OperatorID is the operator's, or OwnerID.
	OperatorID string
	Started    time.Time
	LastSeen   time.Time
	// AwaitingTOTP is a session whose password was right and whose TOTP
	// code is yet to be given: it opens no page but the code's.
	AwaitingTOTP bool
}

// OperatorStore keeps operators, their secrets, setup links and API tokens.
type OperatorStore interface {
	// CreateOperator stores a new operator with its first setup link;
	// ErrOperatorExists when another has the email, whatever its case.
	CreateOperator(ctx context.Context, o herald.Operator, link SetupLink) error
	// Operators lists every operator by email.
	Operators(ctx context.Context) ([]herald.Operator, error)
	// Operator returns one; ErrNotFound when none has the ID.
	Operator(ctx context.Context, id string) (herald.Operator, error)
	// OperatorByEmail finds an operator by email, whatever the case of its
	// ASCII letters (EmailKey), with its secrets; ErrNotFound when none has
	// it or its local part is not ASCII (MatchableEmail).
	OperatorByEmail(ctx context.Context, email string) (herald.Operator, OperatorSecrets, error)
	// OperatorSecrets returns an operator's secrets.
	OperatorSecrets(ctx context.Context, id string) (OperatorSecrets, error)
	// UpdateOperator applies c and returns the operator after it. Disabling
	// ends the operator's sessions, deletes its tokens and voids its setup
	// links in the same transaction. ErrNotFound when none has the ID.
	UpdateOperator(ctx context.Context, id string, c OperatorChange) (herald.Operator, error)
	// DeleteOperator deletes an operator with its sessions, tokens and
	// links. ErrNotFound when none has the ID.
	DeleteOperator(ctx context.Context, id string) error

	// ReplaceSetupLink makes link the operator's only setup link.
	ReplaceSetupLink(ctx context.Context, link SetupLink) error
	// SetupLink returns the operator a link's token hash belongs to;
	// ErrNotFound for no such link, ErrLinkGone when used, expired or its
	// operator disabled.
	SetupLink(ctx context.Context, tokenHash string) (herald.Operator, error)
	// UseSetupLink uses the link up by a guarded write, sets the
	// operator's password hash and ends its sessions and API tokens, in one
	// transaction: ErrLinkGone when the link was used, expired or its
	// operator disabled (meanwhile too), ErrNotFound for no such link.
	UseSetupLink(ctx context.Context, tokenHash, passwordHash string) (herald.Operator, error)

	// SetPendingTOTP keeps a TOTP secret issued but not yet confirmed.
	SetPendingTOTP(ctx context.Context, operatorID string, sealed []byte) error
	// ConfirmTOTP makes the pending secret the enrolled one.
	ConfirmTOTP(ctx context.Context, operatorID string) error
	// ResetTOTP removes both secrets.
	ResetTOTP(ctx context.Context, operatorID string) error

	// CreateOperatorToken stores an API token; ErrNotFound when the operator is
	// gone or disabled.
	CreateOperatorToken(ctx context.Context, t OperatorToken) error
	// OperatorTokens lists an operator's unexpired tokens, newest first.
	OperatorTokens(ctx context.Context, operatorID string) ([]OperatorToken, error)
	// DeleteOperatorToken revokes a token; ErrNotFound when the operator has none
	// with that ID.
	DeleteOperatorToken(ctx context.Context, operatorID, tokenID string) error
	// OperatorByToken finds the operator of a token by its hash; ErrNotFound
	// when no unexpired token of an enabled operator has it.
	OperatorByToken(ctx context.Context, hash string) (herald.Operator, error)
}

// SessionStore keeps the dashboard's sessions, so that a session made on
// one node works on every node and signing out ends it everywhere. IDs are
// hashes of the cookie's secret, never the cookie itself.
type SessionStore interface {
	// CreateSession records a session, and forgets those that ended.
	CreateSession(ctx context.Context, s Session) error
	// Session returns a session and, for an operator's, the operator;
	// ErrNotFound when there is none (never made, signed out, or its
	// operator disabled or deleted). It does not judge its age.
	Session(ctx context.Context, id string) (Session, herald.Operator, error)
	// TouchSession records that a session was seen at at, and its operator
	// with it; verified ends an AwaitingTOTP session's wait.
	TouchSession(ctx context.Context, id string, at time.Time, verified bool) error
	// DeleteSession ends a session; ending an unknown one is no error.
	DeleteSession(ctx context.Context, id string) error
}

// A dashboard session ends SessionIdle after it was last seen and
// SessionLifetime after it began (DESIGN 11).
const (
	SessionIdle     = 30 * time.Minute
	SessionLifetime = 12 * time.Hour
)
