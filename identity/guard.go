package identity

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/web"
)

// Store is what identity needs of storage.
type Store interface {
	AttemptStore
	// OperatorByToken finds the operator of an API token by its hash.
	OperatorByToken(ctx context.Context, hash string) (herald.Operator, error)
	// Push finds a push, whose app a route naming only the push is about.
	Push(ctx context.Context, id string) (herald.Push, error)
}

// Guard judges who calls a route and whether they may.
type Guard struct {
	Store Store
	// Token is the owner's break-glass token (HERALD_ADMIN_TOKEN).
	Token string
	// AdminURL is the dashboard's address (HERALD_ADMIN_URL): https makes
	// its cookies Secure and __Host- prefixed, and its origin is the one
	// its forms may come from.
	AdminURL string
	// TrustProxy takes the client's address from the last
	// X-Forwarded-For entry.
	TrustProxy bool
	Now        func() time.Time
	Logger     *slog.Logger
	// Records appends the records of ended attempt windows when due.
	Records *access.Recorder
}

// Bearer lets through an admin API request whose sender may call a route
// that needs n (Authenticate, then Admit), with the sender in its context.
// A refused token is counted (refuseBearer).
func (g *Guard) Bearer(n Need, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		o, err := g.Authenticate(r)
		if errors.Is(err, errTokenRefused) {
			err = g.refuseBearer(w, r)
		}
		if err == nil {
			r, err = g.Admit(WithOperator(r, o), o, n)
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

// Admit decides whether o may call a route that needs n, in DESIGN 11's
// order: an app outside o's apps answers 404 as if it did not exist, before
// the role is judged (403). The app is the one the path names or, for a
// route naming only a push, the push's: the push is then loaded here, once,
// and the request returned carries it for the handler (PushOf). A request
// that may change something then has its intent recorded (access.Note's
// Intend) before its handler acts; 503 when it cannot be.
func (g *Guard) Admit(r *http.Request, o herald.Operator, n Need) (*http.Request, error) {
	if id := r.PathValue("appId"); id != "" && !o.SeesApp(id) {
		return r, herald.ErrNotFound
	}
	if id := r.PathValue("pushId"); id != "" && r.PathValue("appId") == "" && !o.EveryApp() {
		p, err := g.Store.Push(r.Context(), id)
		if err != nil {
			return r, err
		}
		if !o.SeesApp(p.AppID) {
			return r, herald.ErrNotFound
		}
		r = r.WithContext(context.WithValue(r.Context(), pushKey{}, p))
	}
	if !n.Allows(o) {
		return r, n.Refusal()
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

// PushOf returns the push the path names: the one Admit loaded to judge
// its app, else read now.
func (g *Guard) PushOf(r *http.Request) (herald.Push, error) {
	if p, ok := r.Context().Value(pushKey{}).(herald.Push); ok {
		return p, nil
	}
	return g.Store.Push(r.Context(), r.PathValue("pushId"))
}

// OperatorTokenPrefix starts every operator API token, so that one found in
// a log or a repository is recognised for what it is.
const OperatorTokenPrefix = "hop_"

// Authenticate finds who sent an admin API request: the owner, by the
// admin token in constant time, or an operator, by an API token's hash. A
// missing, unknown, expired or revoked token, or one of a disabled
// operator, is the 401 of Unauthorized.
func (g *Guard) Authenticate(r *http.Request) (herald.Operator, error) {
	header := r.Header.Get("Authorization")
	token, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || token == "" {
		return herald.Operator{}, Unauthorized(header, ok)
	}
	got, want := sha256.Sum256([]byte(token)), sha256.Sum256([]byte(g.Token))
	if g.Token != "" && subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
		return herald.Owner(), nil
	}
	if !strings.HasPrefix(token, OperatorTokenPrefix) {
		return herald.Operator{}, errTokenRefused
	}
	o, err := g.Store.OperatorByToken(r.Context(), TokenHash(token))
	if errors.Is(err, herald.ErrNotFound) {
		return o, errTokenRefused
	}
	return o, err
}

// errTokenRefused is Authenticate's answer to a bearer token that is not
// the owner's nor any operator's: a guess, counted by refuseBearer.
var errTokenRefused = fmt.Errorf("%w: bearer token refused", herald.ErrUnauthorized)

// refuseBearer counts a refused bearer token under the client's address
// and returns its answer: 401, or 429 with Retry-After once the address
// has had AttemptLimit refused in its window. Every refusal is
// left to the window's one aggregated record; a valid token is never
// refused, whatever its address's count (it cannot be guessed).
func (g *Guard) refuseBearer(w http.ResponseWriter, r *http.Request) error {
	a, err := g.Store.CountAttempt(r.Context(), []string{BearerKey(ClientAddr(r, g.TrustProxy))}, 0, g.Now())
	if err != nil {
		return err
	}
	g.Records.RecordPendingDue(r.Context())
	if a.Refused() {
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfter(a.Wait)))
		return herald.ErrTooManyRequests
	}
	return Unauthorized(r.Header.Get("Authorization"), true)
}

// RetryAfter is a wait as Retry-After's whole seconds, at least 1.
func RetryAfter(wait time.Duration) int { return max(int(wait.Round(time.Second).Seconds()), 1) }

// Unauthorized is the 401 of a request without the admin token: its
// details say what was wrong with the Authorization header when it was
// missing or not a bearer token, never how a token sent differs.
func Unauthorized(header string, bearer bool) error {
	switch {
	case header == "":
		return herald.ErrUnauthorized.With(herald.MissingHeader("Authorization"))
	case !bearer:
		return herald.ErrUnauthorized.With(herald.Detail{Field: "Authorization", Reason: "must be Bearer followed by the admin token"})
	}
	return herald.ErrUnauthorized
}

// CountSignIn counts a sign-in attempt under keys before it is judged
// (AttemptStore); free is AttemptLimit, as a sign-in's own
// record covers each attempt that is judged.
func (g *Guard) CountSignIn(ctx context.Context, keys ...string) (Attempt, error) {
	a, err := g.Store.CountAttempt(ctx, keys, AttemptLimit, g.Now())
	if err == nil && a.Refused() {
		g.Records.RecordPendingDue(ctx)
	}
	return a, err
}

// Forgive takes back an attempt that succeeded. A failure to is logged:
// the attempt then counts as a failure, which only the limit notices.
func (g *Guard) Forgive(ctx context.Context, a Attempt) {
	if err := g.Store.Forgive(ctx, a); err != nil {
		g.Logger.ErrorContext(ctx, "forgive a sign-in attempt", "err", err)
	}
	g.Records.RecordPendingDue(ctx)
}

type operatorKey struct{}

// WithOperator returns r carrying who made it, and notes it for the
// request's access record.
func WithOperator(r *http.Request, o herald.Operator) *http.Request {
	access.NoteOf(r.Context()).Authenticated(o)
	return r.WithContext(context.WithValue(r.Context(), operatorKey{}, o))
}

// OperatorFrom returns who made an authenticated request: the operator of
// its token or dashboard session, or the owner.
func OperatorFrom(r *http.Request) (herald.Operator, bool) {
	o, ok := r.Context().Value(operatorKey{}).(herald.Operator)
	return o, ok
}

// RequestOperator is who made an authenticated request; the zero operator,
// who may do nothing, when none is known.
func RequestOperator(r *http.Request) herald.Operator {
	o, _ := OperatorFrom(r)
	return o
}

// VisibleApps keeps the apps o may see, in their order.
func VisibleApps(o herald.Operator, apps []herald.App) []herald.App {
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
