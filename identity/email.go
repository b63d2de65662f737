package identity

import (
	"context"
	"strings"
)

// Matching an operator by email (DESIGN 11): emails compare with their
// ASCII letters lowered and nothing else. Unicode case folding would make
// "Kate@example.com" written with the Kelvin sign (U+212A) the operator
// kate@example.com, and PostgreSQL's lower() folds as Unicode does while
// SQLite's lowers ASCII alone, so the key is computed here, once, for
// both engines. An email whose local part is not ASCII matches no one:
// what a provider or a form calls the same mailbox there is not for
// Herald to guess.

// EmailKey is the form of an email operators are matched by: ASCII
// letters lowered, every other byte kept.
func EmailKey(email string) string {
	b := []byte(email)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// MatchableEmail reports whether an email can name an operator: its local
// part (before the last "@") is printable ASCII.
func MatchableEmail(email string) bool {
	at := strings.LastIndexByte(email, '@')
	if at <= 0 {
		return false
	}
	for i := 0; i < at; i++ {
		if c := email[i]; c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// OperatorIdentityStore binds operators to their single sign-on identity.
type OperatorIdentityStore interface {
	// BindOIDC binds the operator to the provider's (issuer, subject) at
	// its first single sign-on, or checks the binding after, in one guarded
	// write. ok is false when the operator is bound to another identity,
	// another operator holds this one, or no operator has the ID; the
	// dashboard refuses those as it refuses an unknown operator.
	BindOIDC(ctx context.Context, operatorID, issuer, subject string) (ok bool, err error)
}
