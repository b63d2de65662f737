package identity

import (
	"context"
	"strings"
	"time"

	"github.com/heraldpush/herald/access"
)

// Attempts at a credential (a password, a TOTP code, a bearer token) are
// counted in the database, so every node shares the count (DESIGN 11), and
// counted before they are judged: the statement that counts an attempt
// also decides whether it may be judged at all, so a burst of N attempts
// gets at most AttemptLimit judged in a window, whatever their timing.
//
// A key (the client's address, the typed email) has one window at a time:
// it starts at the key's first counted attempt and lasts AttemptWindow.
// Once AttemptLimit attempts were counted in it, every further attempt
// until it ends is refused, the right password included, so guessing gains
// nothing from going on.
const (
	AttemptLimit  = 20
	AttemptWindow = 15 * time.Minute
)

// Attempt is what counting an attempt decided: Wait > 0 when it is
// refused, for that long; otherwise it may be judged, and Windows (the
// start of each key's window, in Keys' order) let Forgive take it back.
type Attempt struct {
	Keys    []string
	Windows []time.Time
	Wait    time.Duration
}

// Refused reports whether the attempt must not be judged.
func (a Attempt) Refused() bool { return a.Wait > 0 }

// AttemptStore counts attempts. Refused attempts, and with free 0 every
// attempt, are kept as counts, not records: access.Store.RecordPending
// turns each key's window, once ended, into one aggregated access record.
type AttemptStore interface {
	// CountAttempt counts an attempt at at under each key, in one
	// transaction, and decides it: refused when any key already had
	// AttemptLimit attempts in its window (that key's count keeps the
	// refused attempt; the others' do not count it). free is how many
	// attempts of a window are recorded one by one, by the request's own
	// access record: AttemptLimit for sign-ins, whose refusals alone are
	// aggregated; 0 for bearer tokens, every failure of which is.
	CountAttempt(ctx context.Context, keys []string, free int, at time.Time) (Attempt, error)
	// Forgive takes back an attempt that succeeded, so that only failures
	// count towards the limit.
	Forgive(ctx context.Context, a Attempt) error
	// UseTOTPStep ends the TOTP wait of the session id with the code of
	// step, once: it records the step as the operator's and ends the wait
	// in one transaction, and reports false (changing nothing) when the
	// operator used that step already or the session no longer waits
	// (RFC 6238, 5.2: a code is accepted once, on every node).
	UseTOTPStep(ctx context.Context, sessionID, operatorID string, step uint64, at time.Time) (bool, error)
}

// The keys attempts are counted under. An address is the client's (an
// IPv6 client's /64); a typed email is kept ASCII-lowercased and cut to
// MaxRecordedEmail bytes, so a key is never longer than an email can be.
func AddressKey(addr string) string { return addressPrefix + addr }

// TypedEmailKey is the key of a typed email.
func TypedEmailKey(email string) string {
	return emailPrefix + access.RecordedEmail(EmailKey(strings.TrimSpace(email)))
}

// OwnerKey is the key of the owner's token pasted on the sign-in page from
// an address: counted apart from passwords, so that a stranger who makes
// an address or an email wait does not lock the owner out.
func OwnerKey(addr string) string { return ownerPrefix + addr }

// BearerKey is the key of the admin API's bearer tokens refused from an
// address.
func BearerKey(addr string) string { return bearerPrefix + addr }

const (
	addressPrefix = "addr:"
	emailPrefix   = "email:"
	ownerPrefix   = "owner:"
	bearerPrefix  = "bearer:"
)

// Routes of the aggregated records: the sign-in page's form, and any
// route of the admin API.
const (
	SignInRoute = "POST /login"
	BearerRoute = "/admin/v1/"
)

// AttemptRecord is the aggregated access record of key's window started at
// started, standing for count attempts: sign-ins refused by the throttle
// (429), or bearer tokens refused (401, then 429).
func AttemptRecord(key string, started time.Time, count int) access.Record {
	r := access.Record{At: started, Method: "POST", Route: SignInRoute, Status: 429, Count: count, UserIDs: []string{}}
	switch {
	case strings.HasPrefix(key, emailPrefix):
		r.Email = key[len(emailPrefix):]
	case strings.HasPrefix(key, addressPrefix):
		r.IP = key[len(addressPrefix):]
	case strings.HasPrefix(key, ownerPrefix):
		r.IP = key[len(ownerPrefix):]
	case strings.HasPrefix(key, bearerPrefix):
		r.IP, r.Method, r.Route, r.Status = key[len(bearerPrefix):], "", BearerRoute, 401
	}
	return r
}
