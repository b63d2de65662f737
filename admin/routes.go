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
	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/identity"
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
	identity.SessionStore
	// OperatorStore keeps named operators, their secrets and API tokens;
	// AttemptStore counts attempts at credentials on every node's behalf.
	identity.OperatorStore
	identity.OperatorIdentityStore
	identity.AttemptStore
	// access.Store keeps the access records (DESIGN 11).
	access.Store
	// ConsentStore keeps the consent trail and the re-confirmation clock.
	herald.ConsentStore
	// DeviceByToken finds the device a test push to a token goes to.
	// ErrNotFound when none holds it.
	DeviceByToken(ctx context.Context, appID, token string) (herald.Device, error)
	// NoticeStore imports consent collected before Herald.
	herald.NoticeStore
	// ExportStore reads the pushes of a user's export.
	herald.ExportStore
	// audience.Store keeps the users' tags (DESIGN 13).
	audience.Store
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
	// Decide approves or rejects p, a push of app awaiting approval
	// (d.Action approved or rejected, by d.By).
	Decide(ctx context.Context, app herald.App, p herald.Push, d herald.Approval) (herald.Push, error)
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
	Token  string
	Logger *slog.Logger
	// Observe, when set, is told of every request (metrics).
	Observe web.Observer
	// Checks are what the admin API asks of the other adapters.
	Checks Checks
	Ready  func(*http.Request) web.Readiness
	// Metrics serves /metrics (Prometheus).
	Metrics http.Handler
	Now     func() time.Time
	// Options are what the operator sets of the admin listener.
	Options
}

// Options are the admin listener's settings the operator chooses
// (HERALD_TRUST_PROXY, HERALD_REQUIRE_TOTP, HERALD_ADMIN_URL and
// HERALD_OIDC_*); server.Config carries them here untouched.
type Options struct {
	// TrustProxy trusts X-Forwarded-Proto (the session cookie is Secure
	// when it says https) and X-Forwarded-For (the client address of the
	// sign-in throttle): set it only behind a proxy that sets both.
	TrustProxy bool
	// RequireTOTP sends a signed-in admin without TOTP to enrol it before
	// any other dashboard page (HERALD_REQUIRE_TOTP).
	RequireTOTP bool
	// AdminURL is the admin listener's address as browsers reach it
	// (HERALD_ADMIN_URL), which setup links and OpenID Connect's redirect
	// start with; server.New fills in http:// and the listener's address
	// when it is empty.
	AdminURL string
	// OIDC is the single sign-on provider; none when its Issuer is empty.
	OIDC OIDCConfig
}

type server struct {
	Config
	// records writes the access records of every route (DESIGN 11);
	// guard judges who calls each route and whether they may.
	records *access.Recorder
	guard   *identity.Guard
}

// Checks are what the admin API asks of the other adapters (the OpenAPI
// document, FCM's and webhooks' rules), handed in by the assembly
// (handler.New) so that admin imports none of them.
type Checks struct {
	// OpenAPI is the document /openapi.yaml serves.
	OpenAPI []byte
	// FCMCredentials validates an uploaded service-account file; its
	// error says what is wrong, and which setting would allow it.
	FCMCredentials func(file []byte) error
	// WebhookURL validates a webhook URL likewise.
	WebhookURL func(url string) error
	// NewWebhookSecret makes a webhook's signing secret.
	NewWebhookSecret func() (string, error)
}

// route is one entry of a route table: its pattern, what it needs of the
// caller (DESIGN 11), and its handler.
type route struct {
	pattern string
	need    identity.Need
	handler http.HandlerFunc
}

// routes lists the whole admin API in one place, each route with the role
// it needs.
func (s *server) routes() []route {
	return []route{
		{"POST /admin/v1/apps", identity.NeedEveryApp, s.createApp},
		{"GET /admin/v1/apps", identity.NeedViewer, s.listApps},
		{"GET /admin/v1/apps/{appId}", identity.NeedViewer, s.getApp},
		{"PATCH /admin/v1/apps/{appId}", identity.NeedAdmin, s.patchApp},
		{"DELETE /admin/v1/apps/{appId}", identity.NeedEveryApp, s.deleteApp},
		{"POST /admin/v1/apps/{appId}/secret-key", identity.NeedAdmin, s.reissueSecret},
		{"POST /admin/v1/apps/{appId}/identity-secret", identity.NeedAdmin, s.rotateIdentitySecret},
		{"PUT /admin/v1/apps/{appId}/fcm-credentials", identity.NeedAdmin, s.putFCMCredentials},
		{"DELETE /admin/v1/apps/{appId}/fcm-credentials", identity.NeedAdmin, s.deleteFCMCredentials},
		{"PUT /admin/v1/apps/{appId}/webhook", identity.NeedAdmin, s.putWebhook},
		{"DELETE /admin/v1/apps/{appId}/webhook", identity.NeedAdmin, s.deleteWebhook},
		{"GET /admin/v1/apps/{appId}/users", identity.NeedOperator, s.listUsers},
		{"GET /admin/v1/apps/{appId}/users/{userId}", identity.NeedOperator, s.getUser},
		{"GET /admin/v1/apps/{appId}/users/{userId}/consent-history", identity.NeedOperator, s.getConsentHistory},
		{"GET /admin/v1/apps/{appId}/users/{userId}/export", identity.NeedOperator, s.getUserExport},
		{"PATCH /admin/v1/apps/{appId}/users/{userId}/consent", identity.NeedOperator, s.patchUserConsent},
		{"PUT /admin/v1/apps/{appId}/users/{userId}/tags", identity.NeedOperator, s.putUserTags},
		{"GET /admin/v1/apps/{appId}/consent-due", identity.NeedOperator, s.getConsentDue},
		{"POST /admin/v1/apps/{appId}/segments", identity.NeedOperator, s.createSegment},
		{"GET /admin/v1/apps/{appId}/segments", identity.NeedViewer, s.listSegments},
		{"GET /admin/v1/apps/{appId}/segments/{segmentId}", identity.NeedViewer, s.getSegment},
		{"PUT /admin/v1/apps/{appId}/segments/{segmentId}", identity.NeedOperator, s.putSegment},
		{"DELETE /admin/v1/apps/{appId}/segments/{segmentId}", identity.NeedOperator, s.deleteSegment},
		{"GET /admin/v1/apps/{appId}/segments/{segmentId}/count", identity.NeedViewer, s.countSegment},
		{"POST /admin/v1/apps/{appId}/audience/count", identity.NeedOperator, s.countAudience},
		{"POST /admin/v1/apps/{appId}/reconfirmation/run", identity.NeedOperator, s.runReconfirmation},
		{"POST /admin/v1/apps/{appId}/consent-import", identity.NeedOperator, s.consentImport},
		{"POST /admin/v1/apps/{appId}/tag-import", identity.NeedOperator, s.tagImport},
		{"GET /admin/v1/apps/{appId}/pushes", identity.NeedViewer, s.listPushes},
		{"GET /admin/v1/apps/{appId}/scheduled-pushes", identity.NeedViewer, s.listScheduled},
		{"GET /admin/v1/apps/{appId}/push-groups/{requestGroupId}", identity.NeedViewer, s.getPushGroup},
		{"GET /admin/v1/apps/{appId}/usage", identity.NeedViewer, s.getUsage},
		{"GET /admin/v1/apps/{appId}/overview", identity.NeedViewer, s.getOverview},
		{"POST /admin/v1/apps/{appId}/test-push", identity.NeedOperator, s.testPushHandler},
		{"GET /admin/v1/pushes/{pushId}", identity.NeedViewer, s.getPush},
		{"PATCH /admin/v1/pushes/{pushId}", identity.NeedOperator, s.patchPush},
		{"POST /admin/v1/pushes/{pushId}/cancel", identity.NeedOperator, s.cancelPush},
		{"POST /admin/v1/pushes/{pushId}/release", identity.NeedOperator, s.releasePush},
		{"GET /admin/v1/pushes/{pushId}/recipients", identity.NeedOperator, s.getPushRecipients},
		{"POST /admin/v1/pushes/{pushId}/approve", identity.NeedOperator, s.approvePush},
		{"POST /admin/v1/pushes/{pushId}/reject", identity.NeedOperator, s.rejectPush},
		{"POST /admin/v1/operators", identity.NeedEveryApp, s.createOperator},
		{"GET /admin/v1/operators", identity.NeedEveryApp, s.listOperators},
		{"GET /admin/v1/operators/{operatorId}", identity.NeedEveryApp, s.getOperator},
		{"PATCH /admin/v1/operators/{operatorId}", identity.NeedEveryApp, s.patchOperator},
		{"DELETE /admin/v1/operators/{operatorId}", identity.NeedEveryApp, s.deleteOperator},
		{"POST /admin/v1/operators/{operatorId}/setup-link", identity.NeedEveryApp, s.newSetupLink},
		{"POST /admin/v1/operators/{operatorId}/tokens", identity.NeedEveryApp, s.createOperatorToken},
		{"GET /admin/v1/operators/{operatorId}/tokens", identity.NeedEveryApp, s.listOperatorTokens},
		{"DELETE /admin/v1/operators/{operatorId}/tokens/{tokenId}", identity.NeedEveryApp, s.deleteOperatorToken},
		{"DELETE /admin/v1/operators/{operatorId}/totp", identity.NeedEveryApp, s.resetOperatorTOTP},
		{"GET /admin/v1/me", identity.NeedSignedIn, s.getMe},
		{"POST /admin/v1/me/totp", identity.NeedAccount, s.postMyTOTP},
		{"POST /admin/v1/me/totp/confirm", identity.NeedAccount, s.postMyTOTPConfirm},
		{"GET /admin/v1/access-records", identity.NeedEveryApp, s.records.List},
		{"GET /admin/v1/access-records/verify", identity.NeedEveryApp, s.records.VerifyHandler},
		{"GET /admin/v1/access-records/head", identity.NeedEveryApp, s.records.Head},
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

// APINeeds returns what each admin API route needs of its caller, by
// pattern, for the test that holds the OpenAPI document's 403s to them.
func APINeeds() map[string]identity.Need {
	out := map[string]identity.Need{}
	for _, r := range (&server{}).routes() {
		out[r.pattern] = r.need
	}
	return out
}

// NewHandler returns the admin listener's handler.
func NewHandler(cfg Config) http.Handler {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := newServer(cfg)
	mux := http.NewServeMux()
	for _, r := range s.routes() {
		mux.HandleFunc(r.pattern, s.records.Wrap(s.guard.Bearer(r.need, r.handler), web.Error))
	}
	d := newDashboard(s)
	for _, r := range d.routes() {
		h := r.handler
		if r.need != identity.NeedPublic {
			h = d.signedIn(r.need, h) // the dashboard checks its own session
		}
		mux.HandleFunc(r.pattern, s.records.Wrap(h, d.fail))
	}
	web.Health(mux, cfg.Ready)
	web.OpenAPI(mux, cfg.Checks.OpenAPI)
	if cfg.Metrics != nil {
		mux.Handle("GET /metrics", cfg.Metrics)
	}
	return web.Logged(cfg.Logger, cfg.Observe, web.Deadline(web.RequestDeadline, d.unknownPages(mux, web.Mux(mux))))
}

// newServer is the admin API's server on cfg, with its recorder of
// access records.
func newServer(cfg Config) *server {
	records := &access.Recorder{Store: cfg.Store, Key: cfg.MasterKey.AccessKey(), Now: cfg.Now,
		TrustProxy: cfg.TrustProxy, Logger: cfg.Logger}
	return &server{Config: cfg, records: records, guard: &identity.Guard{Store: cfg.Store, Token: cfg.Token,
		AdminURL: cfg.AdminURL, TrustProxy: cfg.TrustProxy, Now: cfg.Now, Logger: cfg.Logger, Records: records}}
}
