// Package admin serves the admin listener: the operator's API (apps, keys,
// credentials, webhooks, users, history, usage) and its web dashboard.
// It takes delivery as one small interface (Delivery) and calls the
// packages it shares rules with directly: request's reading of bodies
// (its JSON bodies, and a push request for the compose page), fcm's
// service-account check and webhook's URL check and secrets. Package handler builds it beside the public listener from
// one set of dependencies, for `herald serve` and the tests.
package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/api"
	"github.com/heraldpush/herald/web"
)

// Store is what the admin API needs of storage.
type Store interface {
	herald.AppStore
	herald.UserStore
	herald.PushStore
	herald.HistoryStore
	// SessionStore keeps dashboard sessions, so that on several nodes a
	// session works on all of them and signing out ends it everywhere.
	herald.SessionStore
	// OperatorStore keeps named operators, their secrets and API tokens;
	// SignInStore counts failed sign-ins on every node's behalf.
	herald.OperatorStore
	herald.SignInStore
	// ConsentStore keeps the consent trail and the re-confirmation clock.
	herald.ConsentStore
	// DeviceByToken finds the device a test push to a token goes to.
	// ErrNotFound when none holds it.
	DeviceByToken(ctx context.Context, appID, token string) (herald.Device, error)
	// NoticeStore imports consent collected before Herald.
	herald.NoticeStore
	// ExportStore reads the pushes of a user's export.
	herald.ExportStore
}

// Delivery is what the admin API needs of delivery (delivery.Service).
type Delivery interface {
	// Accept accepts test and composed pushes durably, as the Server API
	// does.
	Accept(ctx context.Context, p herald.Push, rs []herald.Recipient, idem *herald.Idempotency) (id string, replayed bool, err error)
	// EditScheduled and CancelScheduled change a scheduled push.
	EditScheduled(ctx context.Context, pushID string, c herald.PushChange) (herald.Push, error)
	CancelScheduled(ctx context.Context, pushID string) (herald.Push, error)
	// Release lets a push held by a restore go on where it stood.
	Release(ctx context.Context, pushID string) (herald.Push, error)
	// Reconfirm sends the app's users due within its lead days their
	// notice; day "" is a run the operator asked for.
	Reconfirm(ctx context.Context, app herald.App, day string) (notified int, pushID string, claimed bool, err error)
}

// Config holds the admin handler's dependencies.
type Config struct {
	Store Store
	// Delivery accepts, edits and cancels pushes and runs re-confirmations;
	// nil in tests that need none of them.
	Delivery  Delivery
	MasterKey *herald.MasterKey
	// Token is the admin bearer token.
	Token  string
	Logger *slog.Logger
	// Observe, when set, is told of every request (metrics).
	Observe web.Observer
	// FCMAllowAnyTokenURI accepts uploaded service-account files whose
	// token_uri is not Google's (the FCM emulator's).
	FCMAllowAnyTokenURI bool
	// WebhookAllowPrivate accepts http webhook URLs and private hosts.
	WebhookAllowPrivate bool
	Ready               func(*http.Request) web.Readiness
	// Metrics serves /metrics (Prometheus).
	Metrics http.Handler
	Now     func() time.Time
	// TrustProxy trusts X-Forwarded-Proto (the session cookie is Secure
	// when it says https) and X-Forwarded-For (the client address of the
	// sign-in throttle): set it only behind a proxy that sets both.
	TrustProxy bool
}

type server struct {
	Config
}

type route struct {
	pattern string
	handler http.HandlerFunc
}

// routes lists the whole admin API in one place.
func (s *server) routes() []route {
	return []route{
		{"POST /admin/v1/apps", s.createApp},
		{"GET /admin/v1/apps", s.listApps},
		{"GET /admin/v1/apps/{appId}", s.getApp},
		{"PATCH /admin/v1/apps/{appId}", s.patchApp},
		{"DELETE /admin/v1/apps/{appId}", s.deleteApp},
		{"POST /admin/v1/apps/{appId}/secret-key", s.reissueSecret},
		{"PUT /admin/v1/apps/{appId}/fcm-credentials", s.putFCMCredentials},
		{"DELETE /admin/v1/apps/{appId}/fcm-credentials", s.deleteFCMCredentials},
		{"PUT /admin/v1/apps/{appId}/webhook", s.putWebhook},
		{"DELETE /admin/v1/apps/{appId}/webhook", s.deleteWebhook},
		{"GET /admin/v1/apps/{appId}/users", s.listUsers},
		{"GET /admin/v1/apps/{appId}/users/{userId}", s.getUser},
		{"GET /admin/v1/apps/{appId}/users/{userId}/consent-history", s.getConsentHistory},
		{"GET /admin/v1/apps/{appId}/users/{userId}/export", s.getUserExport},
		{"PATCH /admin/v1/apps/{appId}/users/{userId}/consent", s.patchUserConsent},
		{"GET /admin/v1/apps/{appId}/consent-due", s.getConsentDue},
		{"POST /admin/v1/apps/{appId}/reconfirmation/run", s.runReconfirmation},
		{"POST /admin/v1/apps/{appId}/consent-import", s.consentImport},
		{"GET /admin/v1/apps/{appId}/pushes", s.listPushes},
		{"GET /admin/v1/apps/{appId}/scheduled-pushes", s.listScheduled},
		{"GET /admin/v1/apps/{appId}/push-groups/{requestGroupId}", s.getPushGroup},
		{"GET /admin/v1/apps/{appId}/usage", s.getUsage},
		{"GET /admin/v1/apps/{appId}/overview", s.getOverview},
		{"POST /admin/v1/apps/{appId}/test-push", s.testPushHandler},
		{"GET /admin/v1/pushes/{pushId}", s.getPush},
		{"PATCH /admin/v1/pushes/{pushId}", s.patchPush},
		{"POST /admin/v1/pushes/{pushId}/cancel", s.cancelPush},
		{"POST /admin/v1/pushes/{pushId}/release", s.releasePush},
	}
}

// Routes returns the patterns ("METHOD /path") of every admin route, for the
// test that holds the OpenAPI document to them.
func Routes() []string {
	var out []string
	for _, r := range (&server{}).routes() {
		out = append(out, r.pattern)
	}
	return append(out, append(web.CommonRoutes, "GET /metrics")...)
}

// NewHandler returns the admin listener's handler.
func NewHandler(cfg Config) http.Handler {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &server{Config: cfg}
	mux := http.NewServeMux()
	for _, r := range s.routes() {
		mux.HandleFunc(r.pattern, s.authorized(r.handler))
	}
	d := newDashboard(s)
	for _, r := range d.routes() {
		mux.HandleFunc(r.pattern, r.handler) // the dashboard checks its own session
	}
	web.Health(mux, cfg.Ready)
	web.OpenAPI(mux, api.OpenAPI)
	if cfg.Metrics != nil {
		mux.Handle("GET /metrics", cfg.Metrics)
	}
	return web.Logged(cfg.Logger, cfg.Observe, web.Deadline(web.RequestDeadline, d.unknownPages(mux, web.Mux(mux))))
}

// authorized checks the bearer token in constant time.
func (s *server) authorized(h http.HandlerFunc) http.HandlerFunc {
	want := sha256.Sum256([]byte(s.Token))
	return func(w http.ResponseWriter, r *http.Request) {
		header := r.Header.Get("Authorization")
		token, ok := strings.CutPrefix(header, "Bearer ")
		got := sha256.Sum256([]byte(token))
		if !ok || s.Token == "" || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="herald-admin"`)
			web.Error(w, r, unauthorized(header, ok))
			return
		}
		h(w, withOperator(r, herald.Owner()))
	}
}

type operatorKey struct{}

// withOperator returns r carrying who made it.
func withOperator(r *http.Request, o herald.Operator) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), operatorKey{}, o))
}

// operatorFrom returns who made an authenticated request: the operator of
// its token or dashboard session, or the owner.
func operatorFrom(r *http.Request) (herald.Operator, bool) {
	o, ok := r.Context().Value(operatorKey{}).(herald.Operator)
	return o, ok
}

// unauthorized is the 401 of a request without the admin token: its
// details say what was wrong with the Authorization header when it was
// missing or not a bearer token, never how a token sent differs.
func unauthorized(header string, bearer bool) error {
	switch {
	case header == "":
		return herald.ErrUnauthorized.With(herald.MissingHeader("Authorization"))
	case !bearer:
		return herald.ErrUnauthorized.With(herald.Detail{Field: "Authorization", Reason: "must be Bearer followed by the admin token"})
	}
	return herald.ErrUnauthorized
}
