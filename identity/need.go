// Package identity says who calls the admin listener and what they may do
// there (DESIGN 11): what each route needs of its caller (Need) and the
// Guard that judges it, the owner's and operators' bearer tokens, the
// counting of attempts at a credential before they are judged (the
// throttle), passwords, TOTP codes, the dashboard's session secrets and
// where a browser's form comes from. The dashboard's sign-in pages and the
// admin API's operator routes are admin's; they use what is here.
//
// It owns the sign-in vocabulary and the stores behind it, which both SQL
// engines implement and storetest checks: an operator's secrets and
// changes (OperatorSecrets, OperatorChange), setup links, API tokens and
// their hash (TokenHash), dashboard sessions and their lifetimes, the
// email an operator is matched by (EmailKey), the single sign-on binding,
// and the attempt counts with their keys and the aggregated access record
// each window becomes (AttemptRecord). The Operator itself and its Role
// stay in package herald: the access records name their actor by it, and
// package access, which identity uses, cannot import identity.
package identity

import "github.com/heraldpush/herald"

// Need is what a route asks of whoever calls it (DESIGN 11). Every entry of
// both route tables names one; the zero value is no need at all, which the
// route-table test refuses, so a route is never left open by omission.
type Need int8

const (
	// NeedPublic: anyone, signed in or not (the sign-in pages, static
	// files). The admin API has no such route.
	NeedPublic Need = iota + 1
	// NeedSignedIn: any signed-in operator or the owner (/me, signing out).
	NeedSignedIn
	// NeedAccount: a signed-in operator's own account (TOTP enrolment);
	// the owner's token has none.
	NeedAccount
	// NeedViewer, NeedOperator and NeedAdmin: that role or above.
	NeedViewer
	NeedOperator
	NeedAdmin
	// NeedEveryApp: an admin whose apps are every app (creating and
	// deleting apps, operators, access records).
	NeedEveryApp
)

// Role is the role a need asks for; 0 for public and signed-in routes.
func (n Need) Role() herald.Role {
	switch n {
	case NeedViewer:
		return herald.RoleViewer
	case NeedOperator:
		return herald.RoleOperator
	case NeedAdmin, NeedEveryApp:
		return herald.RoleAdmin
	}
	return 0
}

// Allows reports whether o may call a route that needs n.
func (n Need) Allows(o herald.Operator) bool {
	switch n {
	case NeedPublic, NeedSignedIn:
		return true
	case NeedAccount:
		return o.ID != herald.OwnerID
	case NeedEveryApp:
		return o.Role.Includes(herald.RoleAdmin) && o.EveryApp()
	case NeedViewer, NeedOperator, NeedAdmin:
		return o.Role.Includes(n.Role())
	}
	return false
}

// Refusal is the 403 of a route o's role does not allow, naming what the
// route needs.
func (n Need) Refusal() error {
	if n == NeedAccount {
		return ErrOwnerAccount
	}
	if n == NeedEveryApp {
		return herald.ErrForbidden.With(herald.Detail{Field: "role", Reason: "needs the admin role for every app (apps: null)"})
	}
	return herald.Forbidden(n.Role())
}

// Can reports whether o may do what the named need asks ("viewer",
// "operator", "admin", "everyApp"): the pages hide the links and forms o
// cannot use.
func Can(o herald.Operator, name string) bool {
	if name == "everyApp" {
		return NeedEveryApp.Allows(o)
	}
	role, ok := herald.ParseRole(name)
	return ok && o.Role.Includes(role)
}

// SeesUsers reports whether o may see user-level data: per-user rows of a push,
// users, consent history.
func SeesUsers(o herald.Operator) bool { return o.Role.Includes(herald.RoleOperator) }

// ErrOwnerAccount refuses the owner's token where an operator's account
// is meant.
var ErrOwnerAccount = herald.ErrForbidden.With(herald.Detail{Field: "operator",
	Reason: "the owner's token has no account: sign in as an operator"})

// Refuses reports whether a route that needs n answers 403 to some
// authenticated caller: every need above the viewer's (an operator's
// own account refuses the owner's token).
func (n Need) Refuses() bool {
	switch n {
	case NeedAccount, NeedOperator, NeedAdmin, NeedEveryApp:
		return true
	}
	return false
}
