package admin

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/identity"
)

// RouteNeed is one route of either table with what it needs, for the
// tests that walk the tables.
type RouteNeed struct {
	Pattern string
	// Need is "public", "signedIn", "viewer", "operator", "admin",
	// "everyApp", or "" for a route left without one.
	Need string
	// Dashboard: the route is a dashboard page or form, not the JSON API.
	Dashboard bool
}

var needNames = map[identity.Need]string{identity.NeedPublic: "public", identity.NeedSignedIn: "signedIn", identity.NeedAccount: "account", identity.NeedViewer: "viewer",
	identity.NeedOperator: "operator", identity.NeedAdmin: "admin", identity.NeedEveryApp: "everyApp"}

// RouteNeeds lists both route tables.
func RouteNeeds() []RouteNeed {
	s := &server{}
	var out []RouteNeed
	for _, r := range s.routes() {
		out = append(out, RouteNeed{r.pattern, needNames[r.need], false})
	}
	for _, r := range newDashboard(s).routes() {
		out = append(out, RouteNeed{r.pattern, needNames[r.need], true})
	}
	return out
}

// SignInSession makes a dashboard session for operatorID (or
// herald.OwnerID) as signing in would, and returns its cookie's value and
// its forms' CSRF token.
func SignInSession(ctx context.Context, store identity.SessionStore, adminToken, operatorID string, now time.Time) (cookie, csrf string, err error) {
	g := &identity.Guard{Token: adminToken}
	secret := rand.Text()
	if err := store.CreateSession(ctx, identity.Session{ID: identity.SessionID(secret), OperatorID: operatorID, Started: now, LastSeen: now}); err != nil {
		return "", "", err
	}
	cookie = secret
	if operatorID == herald.OwnerID {
		cookie += "." + g.OwnerMAC(secret)
	}
	return cookie, identity.CSRFToken(secret), nil
}
