package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/api"
	"github.com/heraldpush/herald/internal/testenv"
)

// clock is a settable clock for handlers under test.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// frozenAPI serves the public API over env's database with a clock that
// moves only when told, so every request of a test falls within one
// cache validity unless the test moves it.
func frozenAPI(t *testing.T, env *testenv.Env) (string, *clock) {
	t.Helper()
	c := &clock{now: fakeNow}
	srv := httptest.NewServer(api.NewHandler(api.Config{Store: env.DB, Now: c.Now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	t.Cleanup(srv.Close)
	return srv.URL, c
}

// TestSDKAppCache checks that the SDK API's cache of apps changes no
// answer: a deleted app's key is unknown at once on every SDK call, and
// nothing is written for it; the Server API reads the app each time, so a
// reissued secret key stops working at once.
func TestSDKAppCache(t *testing.T) {
	t.Parallel()
	t.Run("ErrUnknownAPIKeyOnceDeleted", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t)
		base, _ := frozenAPI(t, env)
		app := env.CreateApp(t, nil)
		sdk := func(method, path string, body any) testenv.Response {
			return testenv.Send(t, http.DefaultClient, base, testenv.Request{Method: method, URL: path, Body: body,
				Header: map[string]string{"x-api-key": app.APIKey}})
		}
		reg := map[string]any{"deviceId": "d1", "token": "t1", "platform": "ios", "appSourceVersion": "1.6.0", "userId": "u1"}
		if res := sdk(http.MethodPost, pushTokenPath, reg); res.Status != http.StatusOK {
			t.Fatalf("register before deletion: got %d %s, want 200", res.Status, res.Body)
		}
		if res := env.AdminDo(t, http.MethodDelete, "/admin/v1/apps/"+app.ID, nil); res.Status >= 300 {
			t.Fatalf("delete app: got %d %s", res.Status, res.Body)
		}
		calls := []struct {
			name, method, path string
			body               any
		}{
			{"RegisterNewDevice", http.MethodPost, pushTokenPath, map[string]any{"deviceId": "d2", "token": "t2", "platform": "ios", "appSourceVersion": "1.6.0", "userId": "u2"}},
			{"RegisterAgain", http.MethodPost, pushTokenPath, reg},
			{"SetUserID", http.MethodPost, setUserPath, map[string]any{"deviceId": "d1", "userId": "u3"}},
			{"SetConsent", http.MethodPatch, consentPath, map[string]any{"deviceId": "d1", "marketing": true}},
			{"DeleteDevice", http.MethodDelete, pushTokenPath, map[string]any{"deviceId": "d1"}},
		}
		for _, c := range calls {
			testenv.WantError(t, sdk(c.method, c.path, c.body), c.path, herald.ErrUnknownAPIKey)
		}
		var rows int
		if err := env.DB.Reader.QueryRow(`SELECT (SELECT count(*) FROM devices WHERE app_id = ?) + (SELECT count(*) FROM users WHERE app_id = ?)`,
			app.ID, app.ID).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if rows != 0 {
			t.Errorf("devices and users of the deleted app: got %d, want 0", rows)
		}
	})
	t.Run("ServerAPISecretReissuedAtOnce", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t)
		base, _ := frozenAPI(t, env)
		app := env.BusinessApp(t)
		patch := func(secret string) testenv.Response {
			return testenv.Send(t, http.DefaultClient, base, testenv.Request{Method: http.MethodPatch, URL: marketingPath,
				Body:   map[string]any{"userId": "nobody", "state": map[string]any{"marketing": true}},
				Header: map[string]string{"x-api-key": app.APIKey, "x-secret-key": secret}})
		}
		testenv.WantError(t, patch(app.SecretKey), marketingPath, herald.ErrMarketingNoUser)
		if res := env.AdminDo(t, http.MethodPost, "/admin/v1/apps/"+app.ID+"/secret-key", nil); res.Status != http.StatusOK {
			t.Fatalf("reissue: got %d %s, want 200", res.Status, res.Body)
		}
		testenv.WantError(t, patch(app.SecretKey), marketingPath, herald.ErrBadSecretKey)
	})
}

// countingFake counts the app reads of the fake next layer.
type countingFake struct {
	*fake
	reads atomic.Int64
}

func (f *countingFake) AppByAPIKey(ctx context.Context, key string) (herald.App, error) {
	f.reads.Add(1)
	return f.fake.AppByAPIKey(ctx, key)
}

// TestSDKAppCacheReads checks that SDK calls read their app once per
// validity, and Server API calls once each.
func TestSDKAppCacheReads(t *testing.T) {
	t.Parallel()
	f := &countingFake{fake: newFake()}
	c := &clock{now: fakeNow}
	a := fakeAPI{fake: f.fake, h: api.NewHandler(api.Config{Store: f, Pushes: f.fake, Now: c.Now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})}
	reg := `{"deviceId":"d1","token":"t1","platform":"ios","appSourceVersion":"1.6.0"}`
	wantReads := func(step string, want int64) {
		t.Helper()
		if got := f.reads.Load(); got != want {
			t.Errorf("%s: app read %d times, want %d", step, got, want)
		}
	}
	for range 3 {
		if res := a.do(http.MethodPost, pushTokenPath, reg); res.Status != http.StatusOK {
			t.Fatalf("register: got %d %s, want 200", res.Status, res.Body)
		}
	}
	wantReads("three SDK calls", 1)
	c.Add(time.Second)
	a.do(http.MethodPost, pushTokenPath, reg)
	wantReads("an SDK call a second later", 2)
	for range 2 {
		a.do(http.MethodPatch, marketingPath, `{"userId":"u1","state":{"marketing":true}}`)
	}
	wantReads("two Server API calls", 4)
}
