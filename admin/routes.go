// Package admin serves the admin listener: the operators' API (apps, keys,
// credentials, webhooks, users, history, usage, operators) and its web
// dashboard. Each route of both tables names what it needs of the caller
// (authz.go, DESIGN 11): the owner's token, an operator's API token or a
// dashboard session authenticates; an app outside the operator's apps
// answers 404, then a role short of the route's answers 403.
// It takes delivery as one small interface (Delivery) and calls the
// packages it shares rules with directly: request's reading of bodies
// (its JSON bodies, and a push request for the compose page), fcm's
// service-account check and webhook's URL check and secrets. Package handler builds it beside the public listener from
// one set of dependencies, for `herald serve` and the tests. Operators
// sign in to the dashboard by password and TOTP (signin.go, password.go,
// setup.go, account.go) or single sign-on (oidc.go), the owner by the
// admin token; failed sign-ins are counted in the store (throttle.go).
package admin

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
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
	// AttemptStore counts attempts at credentials on every node's behalf.
	herald.OperatorStore
	herald.OperatorIdentityStore
	herald.AttemptStore
	// AccessStore keeps the access records (DESIGN 11).
	herald.AccessStore
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
	// Token is the owner's admin bearer token (HERALD_ADMIN_TOKEN).
	Token string
	// AdminURL is the admin listener's address as browsers reach it
	// (HERALD_ADMIN_URL), which setup links and OpenID Connect's redirect
	// start with.
	AdminURL string
	Logger   *slog.Logger
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
	// RequireTOTP sends a signed-in admin without TOTP to enrol it before
	// any other dashboard page (HERALD_REQUIRE_TOTP).
	RequireTOTP bool
	// OIDC is the single sign-on provider; none when its Issuer is empty.
	OIDC OIDCConfig
}

type server struct {
	Config
	// records writes the access records of every route (DESIGN 11).
	records *access.Recorder
}

// route is one entry of a route table: its pattern, what it needs of the
// caller (DESIGN 11), and its handler.
type route struct {
	pattern string
	need    need
	handler http.HandlerFunc
}

// routes lists the whole admin API in one place, each route with the role
// it needs.
func (s *server) routes() []route {
	return []route{
		{"POST /admin/v1/apps", needEveryApp, s.createApp},
		{"GET /admin/v1/apps", needViewer, s.listApps},
		{"GET /admin/v1/apps/{appId}", needViewer, s.getApp},
		{"PATCH /admin/v1/apps/{appId}", needAdmin, s.patchApp},
		{"DELETE /admin/v1/apps/{appId}", needEveryApp, s.deleteApp},
		{"POST /admin/v1/apps/{appId}/secret-key", needAdmin, s.reissueSecret},
		{"POST /admin/v1/apps/{appId}/identity-secret", needAdmin, s.rotateIdentitySecret},
		{"PUT /admin/v1/apps/{appId}/fcm-credentials", needAdmin, s.putFCMCredentials},
		{"DELETE /admin/v1/apps/{appId}/fcm-credentials", needAdmin, s.deleteFCMCredentials},
		{"PUT /admin/v1/apps/{appId}/webhook", needAdmin, s.putWebhook},
		{"DELETE /admin/v1/apps/{appId}/webhook", needAdmin, s.deleteWebhook},
		{"GET /admin/v1/apps/{appId}/users", needOperator, s.listUsers},
		{"GET /admin/v1/apps/{appId}/users/{userId}", needOperator, s.getUser},
		{"GET /admin/v1/apps/{appId}/users/{userId}/consent-history", needOperator, s.getConsentHistory},
		{"GET /admin/v1/apps/{appId}/users/{userId}/export", needOperator, s.getUserExport},
		{"PATCH /admin/v1/apps/{appId}/users/{userId}/consent", needOperator, s.patchUserConsent},
		{"GET /admin/v1/apps/{appId}/consent-due", needOperator, s.getConsentDue},
		{"POST /admin/v1/apps/{appId}/reconfirmation/run", needOperator, s.runReconfirmation},
		{"POST /admin/v1/apps/{appId}/consent-import", needOperator, s.consentImport},
		{"GET /admin/v1/apps/{appId}/pushes", needViewer, s.listPushes},
		{"GET /admin/v1/apps/{appId}/scheduled-pushes", needViewer, s.listScheduled},
		{"GET /admin/v1/apps/{appId}/push-groups/{requestGroupId}", needViewer, s.getPushGroup},
		{"GET /admin/v1/apps/{appId}/usage", needViewer, s.getUsage},
		{"GET /admin/v1/apps/{appId}/overview", needViewer, s.getOverview},
		{"POST /admin/v1/apps/{appId}/test-push", needOperator, s.testPushHandler},
		{"GET /admin/v1/pushes/{pushId}", needViewer, s.getPush},
		{"PATCH /admin/v1/pushes/{pushId}", needOperator, s.patchPush},
		{"POST /admin/v1/pushes/{pushId}/cancel", needOperator, s.cancelPush},
		{"POST /admin/v1/pushes/{pushId}/release", needOperator, s.releasePush},
		{"POST /admin/v1/operators", needEveryApp, s.createOperator},
		{"GET /admin/v1/operators", needEveryApp, s.listOperators},
		{"GET /admin/v1/operators/{operatorId}", needEveryApp, s.getOperator},
		{"PATCH /admin/v1/operators/{operatorId}", needEveryApp, s.patchOperator},
		{"DELETE /admin/v1/operators/{operatorId}", needEveryApp, s.deleteOperator},
		{"POST /admin/v1/operators/{operatorId}/setup-link", needEveryApp, s.newSetupLink},
		{"POST /admin/v1/operators/{operatorId}/tokens", needEveryApp, s.createOperatorToken},
		{"GET /admin/v1/operators/{operatorId}/tokens", needEveryApp, s.listOperatorTokens},
		{"DELETE /admin/v1/operators/{operatorId}/tokens/{tokenId}", needEveryApp, s.deleteOperatorToken},
		{"DELETE /admin/v1/operators/{operatorId}/totp", needEveryApp, s.resetOperatorTOTP},
		{"GET /admin/v1/me", needSignedIn, s.getMe},
		{"POST /admin/v1/me/totp", needAccount, s.postMyTOTP},
		{"POST /admin/v1/me/totp/confirm", needAccount, s.postMyTOTPConfirm},
		{"GET /admin/v1/access-records", needEveryApp, s.records.List},
		{"GET /admin/v1/access-records/verify", needEveryApp, s.records.VerifyHandler},
		{"GET /admin/v1/access-records/head", needEveryApp, s.records.Head},
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
	s := newServer(cfg)
	mux := http.NewServeMux()
	for _, r := range s.routes() {
		mux.HandleFunc(r.pattern, s.records.Wrap(s.authorized(r.need, r.handler), web.Error))
	}
	d := newDashboard(s)
	for _, r := range d.routes() {
		h := r.handler
		if r.need != needPublic {
			h = d.signedIn(r.need, h) // the dashboard checks its own session
		}
		mux.HandleFunc(r.pattern, s.records.Wrap(h, d.fail))
	}
	web.Health(mux, cfg.Ready)
	web.OpenAPI(mux, api.OpenAPI)
	if cfg.Metrics != nil {
		mux.Handle("GET /metrics", cfg.Metrics)
	}
	return web.Logged(cfg.Logger, cfg.Observe, web.Deadline(web.RequestDeadline, d.unknownPages(mux, web.Mux(mux))))
}

// newServer is the admin API's server on cfg, with its recorder of
// access records.
func newServer(cfg Config) *server {
	return &server{Config: cfg, records: &access.Recorder{Store: cfg.Store, Key: cfg.MasterKey.AccessKey(), Now: cfg.Now,
		TrustProxy: cfg.TrustProxy, Logger: cfg.Logger}}
}

type operatorKey struct{}

// withOperator returns r carrying who made it, and notes it for the
// request's access record.
func withOperator(r *http.Request, o herald.Operator) *http.Request {
	access.NoteOf(r.Context()).Authenticated(o)
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
