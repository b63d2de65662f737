package herald

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// Role is what an operator may do on the admin listener (DESIGN 11); each
// role includes the ones before it.
type Role int8

const (
	// RoleViewer sees apps, pushes and groups without per-user rows,
	// overview and usage.
	RoleViewer Role = iota + 1
	// RoleOperator also sees and changes user-level data, and sends,
	// edits and cancels pushes.
	RoleOperator
	// RoleAdmin also changes app settings, keys, credentials and webhooks;
	// an admin of every app also creates and deletes apps, manages
	// operators and reads access records.
	RoleAdmin
)

var roleNames = [...]string{RoleViewer: "viewer", RoleOperator: "operator", RoleAdmin: "admin"}

// ParseRole reads a role by its name.
func ParseRole(s string) (Role, bool) {
	for r, name := range roleNames {
		if r > 0 && name == s {
			return Role(r), true
		}
	}
	return 0, false
}

func (r Role) String() string {
	if r < RoleViewer || r > RoleAdmin {
		return fmt.Sprintf("Role(%d)", int8(r))
	}
	return roleNames[r]
}

// Includes reports whether r may do what need may.
func (r Role) Includes(need Role) bool { return r >= need }

// MarshalText writes the role's name.
func (r Role) MarshalText() ([]byte, error) {
	if r < RoleViewer || r > RoleAdmin {
		return nil, fmt.Errorf("no role %d", int8(r))
	}
	return []byte(r.String()), nil
}

// UnmarshalText reads a role's name.
func (r *Role) UnmarshalText(b []byte) error {
	role, ok := ParseRole(string(b))
	if !ok {
		return fmt.Errorf("role must be viewer, operator or admin")
	}
	*r = role
	return nil
}

// OwnerID names the platform owner's break-glass credential
// (HERALD_ADMIN_TOKEN) where an operator's ID would stand: in access
// records and as the signed-in identity.
const OwnerID = "owner"

// Operator is a named person who works on the admin listener.
type Operator struct {
	ID string
	// Email is unique, compared without regard to the case of its ASCII
	// letters (identity.EmailKey); it is kept as first written.
	Email string
	Name  string
	Role  Role
	// Apps are the apps the operator may see; nil is every app.
	Apps     []string
	Disabled bool
	// TOTP says the operator has enrolled a second factor.
	TOTP       bool
	CreatedAt  time.Time
	LastSeenAt time.Time // zero when never seen
}

// Owner is the identity of the owner's token: an admin of every app.
func Owner() Operator {
	return Operator{ID: OwnerID, Name: "Owner", Role: RoleAdmin}
}

// SeesApp reports whether appID is among the operator's apps.
func (o Operator) SeesApp(appID string) bool {
	return o.Apps == nil || slices.Contains(o.Apps, appID)
}

// EveryApp reports whether the operator may see every app, which an admin
// needs to create apps, manage operators and read access records.
func (o Operator) EveryApp() bool { return o.Apps == nil }

// MarshalJSON writes the operator as the admin API shows it (DESIGN 11).
func (o Operator) MarshalJSON() ([]byte, error) {
	var seen *time.Time
	if !o.LastSeenAt.IsZero() {
		t := o.LastSeenAt.UTC()
		seen = &t
	}
	return json.Marshal(struct {
		OperatorID string     `json:"operatorId"`
		Email      string     `json:"email"`
		Name       string     `json:"name"`
		Role       Role       `json:"role"`
		Apps       []string   `json:"apps"`
		Disabled   bool       `json:"disabled"`
		TOTP       bool       `json:"totp"`
		CreatedAt  time.Time  `json:"createdAt"`
		LastSeenAt *time.Time `json:"lastSeenAt"`
	}{o.ID, o.Email, o.Name, o.Role, o.Apps, o.Disabled, o.TOTP, o.CreatedAt.UTC(), seen})
}

// Operator errors, in the spec's error shape.
var (
	// ErrForbidden refuses a route the operator's role does not allow;
	// its details name the role needed.
	ErrForbidden = newError("ERR-AB-ADM-03", http.StatusForbidden, "Not allowed for this operator.")
	// ErrOperatorExists refuses a second operator with an email in use.
	ErrOperatorExists = newError("ERR-AB-ADM-04", http.StatusConflict, "Operator already exists.")
	// ErrLinkGone refuses a setup link used or expired.
	ErrLinkGone = newError("ERR-AB-ADM-05", http.StatusGone, "This setup link was used or has expired.")
)

// Forbidden is ErrForbidden naming the role the route needs.
func Forbidden(need Role) *Error {
	return ErrForbidden.With(Detail{Field: "role", Reason: "needs the " + need.String() + " role"})
}
