// Package api serves the public listener: the Server API of the
// specification (x-api-key + x-secret-key) and the SDK API the mobile app
// calls (x-api-key only). Package handler builds it beside the admin
// listener from one set of dependencies, for `herald serve` and the tests.
package api

import (
	"context"
	_ "embed"
	"log/slog"
	"net/http"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/web"
)

// OpenAPI is the OpenAPI 3.1 document of every public and admin route.
//
//go:embed openapi.yaml
var OpenAPI []byte

// Store is what the public API needs of storage.
type Store interface {
	herald.AppStore
	herald.UserStore
	audience.Store
	IdempotentPush(ctx context.Context, appID string, idem herald.Idempotency, now time.Time) (herald.Push, bool, error)
}

// Config holds the handler's dependencies.
type Config struct {
	Store  Store
	Pushes Pusher
	Logger *slog.Logger
	// MasterKey opens the apps' identity secrets (identity verification).
	MasterKey *herald.MasterKey
	// Observe, when set, is told of every request (metrics).
	Observe web.Observer
	// Events records what devices report about pushes (the events
	// endpoint); CountEvent, when set, is told of each event reported,
	// by type, and whether it was accepted (metrics).
	Events     herald.EventStore
	CountEvent func(typ herald.EventType, accepted bool)
	// Ready reports whether the service can take traffic (/readyz).
	Ready func(r *http.Request) web.Readiness
	Now   func() time.Time
	// Limits are the public API's rate limits (HERALD_*_RATE_LIMIT).
	Limits Limits
}

// Limits are the public API's rate limits on this node, each in requests
// a second with bursts of twice that; zero for no limit. The operator
// sets them (HERALD_RATE_LIMIT and its siblings).
type Limits struct {
	// Server is the Server API requests each app may make
	// (HERALD_RATE_LIMIT).
	Server float64
	// SDK is the SDK API requests each app may make, SDKClient those of
	// one client address (HERALD_SDK_RATE_LIMIT,
	// HERALD_SDK_CLIENT_RATE_LIMIT).
	SDK, SDKClient float64
	// AuthFailure is the failed Server API authentications one client
	// address, and one app's API key, may have; past it a client's
	// requests answer 429 before the store is read
	// (HERALD_AUTH_FAILURE_RATE_LIMIT).
	AuthFailure float64
}

type server struct {
	store  Store
	pushes Pusher
	limits rateLimits
	now    func() time.Time
	// events records event reports; countEvent counts them (may be nil).
	events     herald.EventStore
	countEvent func(herald.EventType, bool)
	// apps caches the SDK API's apps by API key.
	apps *appCache
	// masterKey opens identity secrets.
	masterKey *herald.MasterKey
}

// rateLimits are the public API's limiters (nil: no limit).
type rateLimits struct {
	server       *limiter // Server API requests per app
	sdk          *limiter // SDK API requests per app
	sdkClient    *limiter // SDK API requests per client address
	failedClient *limiter // failed Server API authentications per client address
	failedApp    *limiter // failed Server API authentications per app
}

// route is one entry of the public API.
type route struct {
	pattern string
	handler http.HandlerFunc
}

// routes lists the whole public API in one place.
func (s *server) routes() []route {
	return []route{
		{"PATCH /api/app-user/v2/marketing", s.serverAPI(appUserGate(herald.ErrMarketingUnavailable), s.setMarketing)},
		{"DELETE /api/app-user/v2", s.serverAPI(appUserGate(herald.ErrWithdrawUnavailable), s.withdrawUser)},
		{"PUT /api/app-user/v2/tags", s.serverAPI(appUserGate(herald.ErrTagsUnavailable), s.setTags)},

		{"POST /api/push/v2/users", s.serverAPI(herald.PushGate, s.pushUsers)},
		{"POST /api/push/v2/messages", s.serverAPI(herald.PushGate, s.pushMessages)},
		{"POST /api/push/v2/topics", s.serverAPI(herald.PushGate, s.pushTopic)},
		{"POST /api/push/v2/all", s.serverAPI(herald.PushGate, s.pushAll)},
		{"POST /api/push/v2/segments", s.serverAPI(herald.PushGate, s.pushSegment)},
		{"POST /api/topic/v2/subscribe", s.serverAPI(nil, s.subscribe)},
		{"POST /api/topic/v2/unsubscribe", s.serverAPI(nil, s.unsubscribe)},
		{"DELETE /api/push-token/v2", s.serverAPI(nil, s.deletePushToken)},

		{"POST /api/sdk/v2/push-token", s.sdkAPI(s.registerPushToken)},
		{"DELETE /api/sdk/v2/push-token", s.sdkAPI(s.deleteDevice)},
		{"POST /api/sdk/v2/user", s.sdkAPI(s.setUserID)},
		{"PATCH /api/sdk/v2/consent", s.sdkAPI(s.setDeviceConsent)},
		{"PATCH /api/sdk/v2/tags", s.sdkAPI(s.setDeviceTags)},
		{"POST /api/sdk/v2/events", s.sdkAPI(s.reportEvents)},
		{"OPTIONS /api/sdk/v2/", preflight},
	}
}

// Routes returns the patterns ("METHOD /path") of every public route, for
// the test that holds the OpenAPI document to them.
func Routes() []string {
	var out []string
	for _, r := range (&server{}).routes() {
		out = append(out, r.pattern)
	}
	return append(out, web.CommonRoutes...)
}

// NewHandler returns the public listener's handler.
func NewHandler(cfg Config) http.Handler {
	s := &server{store: cfg.Store, pushes: cfg.Pushes, now: cfg.Now, events: cfg.Events, countEvent: cfg.CountEvent,
		apps: newAppCache(), masterKey: cfg.MasterKey, limits: rateLimits{
			server: newLimiter(cfg.Limits.Server), sdk: newLimiter(cfg.Limits.SDK), sdkClient: newLimiter(cfg.Limits.SDKClient),
			failedClient: newLimiter(cfg.Limits.AuthFailure), failedApp: newLimiter(cfg.Limits.AuthFailure),
		}}
	if s.now == nil {
		s.now = time.Now
	}
	mux := http.NewServeMux()
	for _, r := range s.routes() {
		mux.HandleFunc(r.pattern, r.handler)
	}
	web.Health(mux, cfg.Ready)
	web.OpenAPI(mux, OpenAPI)
	return web.Logged(cfg.Logger, cfg.Observe, web.Deadline(web.RequestDeadline, cors(web.Mux(mux))))
}

// cors lets web apps call the SDK API, and read the Retry-After of a 429
// or 503 (not a header a page may read across origins unless exposed), so
// that the SDK waits as long as asked. The Server API answers no CORS
// headers: a browser must never hold a secret key.
func cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.URL.Path) >= len(sdkPrefix) && r.URL.Path[:len(sdkPrefix)] == sdkPrefix {
			w.Header().Set("Access-Control-Allow-Origin", "*")
			w.Header().Set("Access-Control-Expose-Headers", "Retry-After")
		}
		next.ServeHTTP(w, r)
	})
}

const sdkPrefix = "/api/sdk/v2/"

func preflight(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Methods", "POST, PATCH, DELETE")
	w.Header().Set("Access-Control-Allow-Headers", "Content-Type, x-api-key")
	w.Header().Set("Access-Control-Max-Age", "86400")
	w.WriteHeader(http.StatusNoContent)
}
