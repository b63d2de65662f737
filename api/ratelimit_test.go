package api_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/api"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/server"
	"github.com/heraldpush/herald/sqlite"
)

func TestRateLimit(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Config: server.Config{API: api.Limits{Server: 1}}}) // bursts of 2
	app, other := env.BusinessApp(t), env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "tok-1", "u1")
	for i := range 2 {
		if res := env.SetMarketing(t, app, "u1", map[string]any{"marketing": true}); res.Status != http.StatusOK {
			t.Fatalf("request %d: got %d, want 200 within the burst", i, res.Status)
		}
	}
	res := env.SetMarketing(t, app, "u1", map[string]any{"marketing": true})
	testenv.WantError(t, res, "/api/app-user/v2/marketing", herald.ErrTooManyRequests)
	if got := res.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After: got %q, want 1", got)
	}
	// Buckets are per app, and the SDK API has limits of its own.
	env.RegisterToken(t, app, "d2", "tok-2", "u2")
	env.RegisterToken(t, other, "d1", "tok-1", "u1")
	if res := env.SetMarketing(t, other, "u1", map[string]any{"marketing": true}); res.Status != http.StatusOK {
		t.Fatalf("another app: got %d, want 200", res.Status)
	}
}

// wantTooMany checks a 429 in the spec's error shape with a Retry-After of
// whole seconds, at least one.
func wantTooMany(t *testing.T, res testenv.Response, path string) {
	t.Helper()
	testenv.WantError(t, res, path, herald.ErrTooManyRequests)
	if n, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || n < 1 {
		t.Errorf("Retry-After: got %q, want whole seconds ≥ 1", res.Header.Get("Retry-After"))
	}
}

// Rates of 0.01/s allow one request, then none for 100 s: the tests do not
// depend on how fast they run.
func TestSDKRateLimit(t *testing.T) {
	t.Parallel()
	register := func(env *testenv.Env, app testenv.App, device string) testenv.Response {
		return env.SDK(t, app, http.MethodPost, "/api/sdk/v2/push-token",
			map[string]any{"deviceId": device, "token": "tok-" + device, "platform": "android", "appSourceVersion": "1.6.0"})
	}
	t.Run("PerClientAddress", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t, testenv.Options{Config: server.Config{API: api.Limits{SDKClient: 0.01}}})
		a, b := env.BusinessApp(t), env.BusinessApp(t)
		if res := register(env, a, "d1"); res.Status != http.StatusOK {
			t.Fatalf("first request: got %d %s, want 200", res.Status, res.Body)
		}
		// The address's bucket holds across apps.
		wantTooMany(t, register(env, b, "d2"), "/api/sdk/v2/push-token")
		// The Server API does not share the SDK's buckets.
		if res := env.SetMarketing(t, a, "nobody", map[string]any{"marketing": true}); res.Status == http.StatusTooManyRequests {
			t.Errorf("Server API after the SDK limit: got 429, want its own answer")
		}
	})
	t.Run("PerApp", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t, testenv.Options{Config: server.Config{API: api.Limits{SDK: 0.01}}})
		a, b := env.BusinessApp(t), env.BusinessApp(t)
		if res := register(env, a, "d1"); res.Status != http.StatusOK {
			t.Fatalf("first request: got %d %s, want 200", res.Status, res.Body)
		}
		wantTooMany(t, register(env, a, "d2"), "/api/sdk/v2/push-token")
		if res := register(env, b, "d1"); res.Status != http.StatusOK {
			t.Errorf("another app: got %d %s, want 200", res.Status, res.Body)
		}
	})
}

// countingStore counts the API key lookups that reach the store.
type countingStore struct {
	api.Store
	lookups atomic.Int64
}

func (s *countingStore) AppByAPIKey(ctx context.Context, apiKey string) (herald.App, error) {
	s.lookups.Add(1)
	return s.Store.AppByAPIKey(ctx, apiKey)
}

// fromAddr is an HTTP client whose connections come from the loopback
// address ip (all of 127/8 is local on Linux).
func fromAddr(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

// TestAuthFailureRateLimit: a wrong secret is answered 401 once, then 429
// from the same address without the store being read; from another
// address the app's own failure bucket answers 429 to a wrong secret while
// the right secret still works.
func TestAuthFailureRateLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	secret := herald.NewSecretKey()
	app := herald.App{ID: herald.NewID("app_", now), Name: "a", APIKey: herald.NewAPIKey(), SecretHash: herald.HashSecret(secret),
		Tier: herald.TierBusiness, AppUserEnabled: true, Registered: true, TimeZone: herald.DefaultTimeZone, CreatedAt: now}
	if err := db.CreateApp(ctx, app); err != nil {
		t.Fatal(err)
	}
	store := &countingStore{Store: db}
	srv := httptest.NewServer(api.NewHandler(api.Config{Store: store, Limits: api.Limits{AuthFailure: 0.01},
		Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(srv.Close)
	const path = "/api/app-user/v2/marketing"
	patch := func(hc *http.Client, key, secret string) testenv.Response {
		return testenv.Send(t, hc, srv.URL, testenv.Request{Method: http.MethodPatch, URL: path,
			Header: map[string]string{"x-api-key": key, "x-secret-key": secret},
			Body:   map[string]any{"userId": "u1", "state": map[string]any{"marketing": true}}})
	}
	one, two := fromAddr("127.0.0.1"), fromAddr("127.0.0.2")

	testenv.WantError(t, patch(one, app.APIKey, "hs_wrong"), path, herald.ErrBadSecretKey)
	for range 3 {
		wantTooMany(t, patch(one, app.APIKey, "hs_wrong"), path)
		wantTooMany(t, patch(one, herald.NewAPIKey(), "hs_any"), path) // unknown keys too
	}
	if n := store.lookups.Load(); n != 1 {
		t.Errorf("store lookups: got %d, want 1 (the 429s must not reach the store)", n)
	}
	// Another address: the right secret works (404: u1 was never
	// registered), a wrong one meets the app's spent failure bucket.
	testenv.WantError(t, patch(two, app.APIKey, secret), path, herald.ErrMarketingNoUser)
	wantTooMany(t, patch(two, app.APIKey, "hs_wrong"), path)
}
