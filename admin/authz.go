package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/web"
)

// need is what a route asks of whoever calls it (DESIGN 11). Every entry of
// both route tables names one; the zero value is no need at all, which the
// route-table test refuses, so a route is never left open by omission.
type need int8

const (
	// needPublic: anyone, signed in or not (the sign-in pages, static
	// files). The admin API has no such route.
	needPublic need = iota + 1
	// needSignedIn: any signed-in operator or the owner (/me, signing out).
	needSignedIn
	// needAccount: a signed-in operator's own account (TOTP enrolment);
	// the owner's token has none.
	needAccount
	// needViewer, needOperator and needAdmin: that role or above.
	needViewer
	needOperator
	needAdmin
	// needEveryApp: an admin whose apps are every app (creating and
	// deleting apps, operators, access records).
	needEveryApp
)

// role is the role a need asks for; 0 for public and signed-in routes.
func (n need) role() herald.Role {
	switch n {
	case needViewer:
		return herald.RoleViewer
	case needOperator:
		return herald.RoleOperator
	case needAdmin, needEveryApp:
		return herald.RoleAdmin
	}
	return 0
}

// allows reports whether o may call a route that needs n.
func (n need) allows(o herald.Operator) bool {
	switch n {
	case needPublic, needSignedIn:
		return true
	case needAccount:
		return o.ID != herald.OwnerID
	case needEveryApp:
		return o.Role.Includes(herald.RoleAdmin) && o.EveryApp()
	case needViewer, needOperator, needAdmin:
		return o.Role.Includes(n.role())
	}
	return false
}

// refusal is the 403 of a route o's role does not allow, naming what the
// route needs.
func (n need) refusal() error {
	if n == needAccount {
		return errOwnerAccount
	}
	if n == needEveryApp {
		return herald.ErrForbidden.With(herald.Detail{Field: "role", Reason: "needs the admin role for every app (apps: null)"})
	}
	return herald.Forbidden(n.role())
}

// can reports whether o may do what the named need asks ("viewer",
// "operator", "admin", "everyApp"): the pages hide the links and forms o
// cannot use.
func can(o herald.Operator, name string) bool {
	if name == "everyApp" {
		return needEveryApp.allows(o)
	}
	role, ok := herald.ParseRole(name)
	return ok && o.Role.Includes(role)
}

// seesUsers reports whether o may see user-level data: per-user rows of a push,
// users, consent history.
func seesUsers(o herald.Operator) bool { return o.Role.Includes(herald.RoleOperator) }

// admit decides whether o may call a route that needs n, in DESIGN 11's
// order: an app outside o's apps answers 404 as if it did not exist, before
// the role is judged (403). The app is the one the path names or, for a
// route naming only a push, the push's: the push is then loaded here, once,
// and the request returned carries it for the handler (pushOf).
func (s *server) admit(r *http.Request, o herald.Operator, n need) (*http.Request, error) {
	if id := r.PathValue("appId"); id != "" && !o.SeesApp(id) {
		return r, herald.ErrNotFound
	}
	if id := r.PathValue("pushId"); id != "" && r.PathValue("appId") == "" && !o.EveryApp() {
		p, err := s.Store.Push(r.Context(), id)
		if err != nil {
			return r, err
		}
		if !o.SeesApp(p.AppID) {
			return r, herald.ErrNotFound
		}
		r = r.WithContext(context.WithValue(r.Context(), pushKey{}, p))
	}
	if !n.allows(o) {
		return r, n.refusal()
	}
	if mutates(r) {
		if err := access.NoteOf(r.Context()).Intend(); err != nil {
			return r, herald.Unavailable(err)
		}
	}
	return r, nil
}

// mutates reports whether r may change something: any method but GET,
// HEAD and OPTIONS. Its intent is recorded before its handler runs.
func mutates(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

type pushKey struct{}

// pushOf returns the push the path names: the one admit loaded to judge
// its app, else read now.
func (s *server) pushOf(r *http.Request) (herald.Push, error) {
	if p, ok := r.Context().Value(pushKey{}).(herald.Push); ok {
		return p, nil
	}
	return s.Store.Push(r.Context(), r.PathValue("pushId"))
}

// operatorTokenPrefix starts every operator API token, so that one found in
// a log or a repository is recognised for what it is.
const operatorTokenPrefix = "hop_"

// authenticate finds who sent an admin API request: the owner, by the admin
// token in constant time, or an operator, by an API token's hash. A
// missing, unknown, expired or revoked token, or one of a disabled
// operator, is the 401 of unauthorized.
func (s *server) authenticate(r *http.Request) (herald.Operator, error) {
	header := r.Header.Get("Authorization")
	token, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || token == "" {
		return herald.Operator{}, unauthorized(header, ok)
	}
	got, want := sha256.Sum256([]byte(token)), sha256.Sum256([]byte(s.Token))
	if s.Token != "" && subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
		return herald.Owner(), nil
	}
	if !strings.HasPrefix(token, operatorTokenPrefix) {
		return herald.Operator{}, errTokenRefused
	}
	o, err := s.Store.OperatorByToken(r.Context(), herald.TokenHash(token))
	if errors.Is(err, herald.ErrNotFound) {
		return o, errTokenRefused
	}
	return o, err
}

// errTokenRefused is authenticate's answer to a bearer token that is not
// the owner's nor any operator's: a guess, counted by refuseBearer.
var errTokenRefused = fmt.Errorf("%w: bearer token refused", herald.ErrUnauthorized)

// refuseBearer counts a refused bearer token under the client's address
// and returns its answer: 401, or 429 with Retry-After once the address
// has had herald.AttemptLimit refused in its window. Every refusal is
// left to the window's one aggregated record; a valid token is never
// refused, whatever its address's count (it cannot be guessed).
func (s *server) refuseBearer(w http.ResponseWriter, r *http.Request) error {
	a, err := s.Store.CountAttempt(r.Context(), []string{herald.BearerKey(clientAddr(r, s.TrustProxy))}, 0, s.Now())
	switch {
	case err != nil:
		return err
	case a.Refused():
		w.Header().Set("Retry-After", strconv.Itoa(max(int(a.Wait.Round(time.Second).Seconds()), 1)))
		s.records.RecordPendingDue(r.Context())
		return herald.ErrTooManyRequests
	}
	s.records.RecordPendingDue(r.Context())
	return unauthorized(r.Header.Get("Authorization"), true)
}

// authorized lets through an admin API request whose sender may call a
// route that needs n (authenticate, then admit), with the sender in its
// context.
func (s *server) authorized(n need, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		o, err := s.authenticate(r)
		if errors.Is(err, errTokenRefused) {
			err = s.refuseBearer(w, r)
		}
		if err == nil {
			r, err = s.admit(withOperator(r, o), o, n)
		}
		if err != nil {
			if errors.Is(err, herald.ErrUnauthorized) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="herald-admin"`)
			}
			web.Error(w, r, err)
			return
		}
		h(w, r)
	}
}

// visibleApps keeps the apps o may see, in their order.
func visibleApps(o herald.Operator, apps []herald.App) []herald.App {
	if o.EveryApp() {
		return apps
	}
	out := apps[:0:0]
	for _, a := range apps {
		if o.SeesApp(a.ID) {
			out = append(out, a)
		}
	}
	return out
}

// requestOperator is who made an authenticated request; the zero operator,
// who may do nothing, when none is known.
func requestOperator(r *http.Request) herald.Operator {
	o, _ := operatorFrom(r)
	return o
}
