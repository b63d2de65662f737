package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/web"
)

type appKey struct{}

// appFrom returns the app the request authenticated as.
func appFrom(ctx context.Context) herald.App {
	a, _ := ctx.Value(appKey{}).(herald.App)
	return a
}

// authenticate runs steps 1–6 of DESIGN.md section 4 (without the secret
// key checks for the SDK API) and returns the app.
func (s *server) authenticate(r *http.Request, needSecret bool) (herald.App, error) {
	apiKey, secret := r.Header.Get("x-api-key"), r.Header.Get("x-secret-key")
	switch {
	case apiKey == "" && secret == "" && !needSecret:
		return herald.App{}, herald.ErrNoKeys.With(herald.MissingHeader("x-api-key"))
	case apiKey == "" && secret == "":
		return herald.App{}, herald.ErrNoKeys
	case apiKey == "":
		return herald.App{}, herald.ErrNoAPIKey
	case needSecret && secret == "":
		return herald.App{}, herald.ErrNoSecretKey
	case !herald.ValidAPIKey(apiKey):
		return herald.App{}, herald.ErrBadAPIKeyType
	}
	app, err := s.appByAPIKey(r, apiKey, !needSecret)
	if errors.Is(err, herald.ErrNotFound) {
		return app, herald.ErrUnknownAPIKey
	} else if err != nil {
		return app, err
	}
	if needSecret && !herald.SecretMatches(app.SecretHash, secret) {
		return app, herald.ErrBadSecretKey
	}
	return app, nil
}

// appByAPIKey reads the app with apiKey; with cached (the SDK API), from
// the cache when it holds the key (see appCache).
func (s *server) appByAPIKey(r *http.Request, apiKey string, cached bool) (herald.App, error) {
	if cached {
		if app, ok := s.apps.get(apiKey, s.now()); ok {
			return app, nil
		}
	}
	app, err := s.store.AppByAPIKey(r.Context(), apiKey)
	if err == nil && cached {
		s.apps.put(apiKey, app, s.now())
	}
	return app, err
}

// gate is step 7 of the chain: whether the endpoint is open to the app.
type gate func(herald.App) error

// appUserGate opens an app-user endpoint to apps with the feature on a
// business or higher tier.
func appUserGate(refused *herald.Error) gate {
	return func(a herald.App) error {
		if d := a.AppUserProblems(); len(d) > 0 {
			return refused.With(d...)
		}
		return nil
	}
}

// serverAPI wraps a Server API handler with the authentication chain and
// the endpoint's gate.
func (s *server) serverAPI(g gate, h http.HandlerFunc) http.HandlerFunc {
	return s.withApp(true, g, h)
}

// sdkAPI wraps an SDK handler: API key only.
func (s *server) sdkAPI(h http.HandlerFunc) http.HandlerFunc {
	return s.withApp(false, nil, h)
}

func (s *server) withApp(needSecret bool, g gate, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var app herald.App
		var err error
		if needSecret {
			app, err = s.admitServer(w, r)
		} else {
			app, err = s.admitSDK(w, r)
		}
		if err == nil && g != nil {
			err = g(app)
		}
		if app.ID != "" {
			web.SetAppID(r.Context(), app.ID)
		}
		if err != nil {
			web.Error(w, r, err)
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), appKey{}, app)))
	}
}

// admitServer authenticates a Server API request within the rate limits:
// a client address (or an app's API key) with too many failed
// authentications is answered 429 before the store is read, then each app
// has its request rate.
func (s *server) admitServer(w http.ResponseWriter, r *http.Request) (herald.App, error) {
	now, addr := s.now(), clientAddr(r)
	if empty, wait := s.limits.failedClient.empty(addr, now); empty {
		return herald.App{}, tooMany(w, wait)
	}
	app, err := s.authenticate(r, true)
	if err != nil {
		if herald.AsError(err) == nil { // the store failed, not the client
			return app, err
		}
		ok, wait := s.limits.failedClient.allow(addr, now)
		if app.ID != "" {
			okApp, waitApp := s.limits.failedApp.allow(app.ID, now)
			ok, wait = ok && okApp, max(wait, waitApp)
		}
		if !ok {
			return app, tooMany(w, wait)
		}
		return app, err
	}
	if ok, wait := s.limits.server.allow(app.ID, now); !ok {
		return app, tooMany(w, wait)
	}
	return app, nil
}

// admitSDK authenticates an SDK API request within the rate limits: each
// client address, checked before the store is read, then each app.
func (s *server) admitSDK(w http.ResponseWriter, r *http.Request) (herald.App, error) {
	now := s.now()
	if ok, wait := s.limits.sdkClient.allow(clientAddr(r), now); !ok {
		return herald.App{}, tooMany(w, wait)
	}
	app, err := s.authenticate(r, false)
	if err != nil {
		return app, err
	}
	if ok, wait := s.limits.sdk.allow(app.ID, now); !ok {
		return app, tooMany(w, wait)
	}
	return app, nil
}

// tooMany sets Retry-After and returns the 429 error.
func tooMany(w http.ResponseWriter, wait time.Duration) error {
	retryAfter(w, wait)
	return herald.ErrTooManyRequests
}
