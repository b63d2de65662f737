package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

const (
	marketingPath = "/api/app-user/v2/marketing"
	withdrawPath  = "/api/app-user/v2"
)

// endpoint is one of the two app-user endpoints with its own gate error.
type endpoint struct {
	name   string
	method string
	path   string
	body   any
	gate   *herald.Error
}

var appUserEndpoints = []endpoint{
	{"PatchMarketing", http.MethodPatch, marketingPath, map[string]any{"userId": "u1", "state": map[string]any{"marketing": true}}, herald.ErrMarketingUnavailable},
	{"DeleteUser", http.MethodDelete, withdrawPath, map[string]any{"userId": "u1"}, herald.ErrWithdrawUnavailable},
}

// TestAuthChain walks DESIGN.md section 4 steps 1–7 in order on both
// app-user endpoints: each case breaks one step and keeps every later one
// broken too, so the answer proves which check runs first.
func TestAuthChain(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	unknownKey := "hk_" + strings.Repeat("Z", 32)
	for _, ep := range appUserEndpoints {
		t.Run(ep.name, func(t *testing.T) {
			t.Parallel()
			tests := []struct {
				name   string
				header map[string]string
				body   any
				want   *herald.Error
			}{
				{"ErrNoKeys", nil, "not json", herald.ErrNoKeys},
				{"ErrNoKeysEmptyValues", map[string]string{"x-api-key": "", "x-secret-key": ""}, ep.body, herald.ErrNoKeys},
				{"ErrNoAPIKey", map[string]string{"x-secret-key": app.SecretKey}, "not json", herald.ErrNoAPIKey},
				{"ErrNoAPIKeyWrongSecret", map[string]string{"x-secret-key": "wrong"}, ep.body, herald.ErrNoAPIKey},
				{"ErrNoSecretKey", map[string]string{"x-api-key": app.APIKey}, "not json", herald.ErrNoSecretKey},
				{"ErrNoSecretKeyBeforeKeyFormat", map[string]string{"x-api-key": "garbage"}, ep.body, herald.ErrNoSecretKey},
				{"ErrBadAPIKeyType", map[string]string{"x-api-key": "garbage", "x-secret-key": app.SecretKey}, ep.body, herald.ErrBadAPIKeyType},
				{"ErrBadAPIKeyTypeShort", map[string]string{"x-api-key": app.APIKey[:34], "x-secret-key": app.SecretKey}, ep.body, herald.ErrBadAPIKeyType},
				{"ErrBadAPIKeyTypeSecretAsAPIKey", map[string]string{"x-api-key": app.SecretKey, "x-secret-key": app.SecretKey}, ep.body, herald.ErrBadAPIKeyType},
				{"ErrBadAPIKeyTypeBadChar", map[string]string{"x-api-key": "hk_" + strings.Repeat("-", 32), "x-secret-key": app.SecretKey}, "not json", herald.ErrBadAPIKeyType},
				{"ErrUnknownAPIKey", map[string]string{"x-api-key": unknownKey, "x-secret-key": app.SecretKey}, "not json", herald.ErrUnknownAPIKey},
				{"ErrBadSecretKey", map[string]string{"x-api-key": app.APIKey, "x-secret-key": "hs_" + strings.Repeat("a", 40)}, "not json", herald.ErrBadSecretKey},
				{"ErrBadSecretKeyMalformed", map[string]string{"x-api-key": app.APIKey, "x-secret-key": "x"}, ep.body, herald.ErrBadSecretKey},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					res := env.Do(t, testenv.Request{Method: ep.method, URL: ep.path, Header: tt.header, Body: tt.body})
					testenv.WantError(t, res, ep.path, tt.want)
				})
			}
		})
	}
}

// TestGate checks step 7: the app-user endpoints answer 403 unless the
// feature is enabled on a business or higher tier, before the body is read,
// with details naming each setting the operator must change.
func TestGate(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	const how = " (admin API: PATCH /admin/v1/apps/{appId})"
	enable := herald.Detail{Field: "appUserEnabled", Reason: "is false; must be true" + how}
	tier := func(is string) herald.Detail {
		return herald.Detail{Field: "tier", Reason: "is " + is + "; must be business or enterprise" + how}
	}
	tests := []struct {
		name     string
		settings map[string]any
		open     bool
		details  []herald.Detail
	}{
		{"ErrFreeEnabled", map[string]any{"tier": "free", "appUserEnabled": true}, false, []herald.Detail{tier("free")}},
		{"ErrBasicEnabled", map[string]any{"tier": "basic", "appUserEnabled": true}, false, []herald.Detail{tier("basic")}},
		{"ErrBusinessDisabled", map[string]any{"tier": "business"}, false, []herald.Detail{enable}},
		{"ErrEnterpriseDisabled", map[string]any{"tier": "enterprise", "appUserEnabled": false}, false, []herald.Detail{enable}},
		{"ErrDefaults", nil, false, []herald.Detail{tier("free"), enable}},
		{"BusinessEnabled", map[string]any{"tier": "business", "appUserEnabled": true}, true, nil},
		{"EnterpriseEnabled", map[string]any{"tier": "enterprise", "appUserEnabled": true}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			app := createGateApp(t, env, tt.settings)
			for _, ep := range appUserEndpoints {
				// A body that is not even JSON: a closed gate answers first.
				res := env.Server(t, app, ep.method, ep.path, "{not json")
				if !tt.open {
					testenv.WantError(t, res, ep.path, ep.gate.With(tt.details...))
					continue
				}
				testenv.WantError(t, res, ep.path, herald.ErrInvalidRequest)
				// An open gate reaches the state check: the user is unknown.
				res = env.Server(t, app, ep.method, ep.path, ep.body)
				want := herald.ErrMarketingNoUser
				if ep.method == http.MethodDelete {
					want = herald.ErrWithdrawNoUser
				}
				testenv.WantError(t, res, ep.path, want)
			}
		})
	}
}

// TestGateFollowsAdminChanges turns the feature on and off through the admin
// API and checks the next request sees it at once.
func TestGateFollowsAdminChanges(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := createGateApp(t, env, map[string]any{"tier": "basic", "appUserEnabled": true})
	env.RegisterToken(t, app, "d1", "tok-1", "u1")
	ep := appUserEndpoints[0]

	testenv.WantError(t, env.Server(t, app, ep.method, ep.path, ep.body), ep.path,
		ep.gate.With((herald.App{Tier: herald.TierBasic, AppUserEnabled: true}).AppUserProblems()...))

	patch(t, env, app, map[string]any{"tier": "business"})
	if res := env.Server(t, app, ep.method, ep.path, ep.body); res.Status != http.StatusOK {
		t.Fatalf("after upgrade: got %d %s, want 200", res.Status, res.Body)
	}

	patch(t, env, app, map[string]any{"appUserEnabled": false})
	testenv.WantError(t, env.Server(t, app, ep.method, ep.path, ep.body), ep.path,
		ep.gate.With((herald.App{Tier: herald.TierBusiness}).AppUserProblems()...))
}

func patch(t *testing.T, env *testenv.Env, app testenv.App, body map[string]any) {
	t.Helper()
	if res := env.AdminDo(t, http.MethodPatch, "/admin/v1/apps/"+app.ID, body); res.Status != http.StatusOK {
		t.Fatalf("patch app: got %d %s, want 200", res.Status, res.Body)
	}
}

// TestPrecedence checks that the first failing step answers when several
// fail at once.
func TestPrecedence(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	open := env.BusinessApp(t)
	gated := env.CreateApp(t, map[string]any{"tier": "free"})
	env.RegisterToken(t, open, "d-w", "tok-w", "withdrawn")
	if res := env.Withdraw(t, open, "withdrawn"); res.Status != http.StatusOK {
		t.Fatalf("withdraw: got %d %s", res.Status, res.Body)
	}
	badBody := map[string]any{"userId": 1.5, "state": map[string]any{"marketing": "yes"}}
	freeApp := (herald.App{Tier: herald.TierFree}).AppUserProblems()
	tests := []struct {
		name   string
		app    testenv.App
		header map[string]string
		body   any
		path   string
		method string
		want   *herald.Error
	}{
		{"BadKeyBeatsBadBody", open, map[string]string{"x-api-key": "bad", "x-secret-key": "x"}, badBody, marketingPath, http.MethodPatch, herald.ErrBadAPIKeyType},
		{"WrongSecretBeatsBadBody", open, map[string]string{"x-api-key": open.APIKey, "x-secret-key": "x"}, badBody, withdrawPath, http.MethodDelete, herald.ErrBadSecretKey},
		{"WrongSecretBeatsGate", gated, map[string]string{"x-api-key": gated.APIKey, "x-secret-key": open.SecretKey}, badBody, marketingPath, http.MethodPatch, herald.ErrBadSecretKey},
		{"GateBeatsBadBodyPatch", gated, nil, badBody, marketingPath, http.MethodPatch, herald.ErrMarketingUnavailable.With(freeApp...)},
		{"GateBeatsBadBodyDelete", gated, nil, badBody, withdrawPath, http.MethodDelete, herald.ErrWithdrawUnavailable.With(freeApp...)},
		{"GateBeatsOversizedBody", gated, nil, strings.Repeat(" ", 2<<20), marketingPath, http.MethodPatch, herald.ErrMarketingUnavailable.With(freeApp...)},
		{"GateBeatsTextPlain", gated, map[string]string{"Content-Type": "text/plain"}, "{}", withdrawPath, http.MethodDelete, herald.ErrWithdrawUnavailable.With(freeApp...)},
		{"BadBodyBeatsWithdrawn", open, nil, map[string]any{"userId": "withdrawn", "state": map[string]any{"marketing": 1}}, marketingPath, http.MethodPatch, herald.ErrInvalidRequest},
		{"BadBodyBeatsUnknownUser", open, nil, map[string]any{"userId": "nobody", "state": map[string]any{}}, marketingPath, http.MethodPatch, herald.ErrInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := map[string]string{"x-api-key": tt.app.APIKey, "x-secret-key": tt.app.SecretKey}
			for k, v := range tt.header {
				h[k] = v
			}
			res := env.Do(t, testenv.Request{Method: tt.method, URL: tt.path, Header: h, Body: tt.body})
			testenv.WantError(t, res, tt.path, tt.want)
		})
	}
}

// TestSDKAuth checks the SDK API's chain: the API key only.
func TestSDKAuth(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.CreateApp(t, nil)
	body := map[string]any{"deviceId": "d1", "token": "t1", "platform": "ios", "appSourceVersion": "1.6.0"}
	const path = "/api/sdk/v2/push-token"
	tests := []struct {
		name   string
		header map[string]string
		want   *herald.Error
	}{
		{"ErrNoKeys", nil, herald.ErrNoKeys.With(herald.MissingHeader("x-api-key"))}, // the SDK sends no secret
		{"ErrNoAPIKey", map[string]string{"x-secret-key": app.SecretKey}, herald.ErrNoAPIKey},
		{"ErrBadAPIKeyType", map[string]string{"x-api-key": "hk_short"}, herald.ErrBadAPIKeyType},
		{"ErrUnknownAPIKey", map[string]string{"x-api-key": "hk_" + strings.Repeat("0", 32)}, herald.ErrUnknownAPIKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := env.Do(t, testenv.Request{Method: http.MethodPost, URL: path, Header: tt.header, Body: body})
			testenv.WantError(t, res, path, tt.want)
		})
	}
	t.Run("OKWithoutSecret", func(t *testing.T) {
		t.Parallel()
		if res := env.SDK(t, app, http.MethodPost, path, body); res.Status != http.StatusOK {
			t.Errorf("got %d %s, want 200", res.Status, res.Body)
		}
	})
}

func TestRouting(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	tests := []struct {
		name      string
		method    string
		path      string
		want      *herald.Error
		wantAllow []string
	}{
		{"ErrUnknownPath", http.MethodPost, "/api/nope", herald.ErrRouteNotFound, nil},
		{"ErrUnknownVersion", http.MethodPatch, "/api/app-user/v3/marketing", herald.ErrRouteNotFound, nil},
		{"ErrRoot", http.MethodGet, "/", herald.ErrRouteNotFound, nil},
		{"ErrUnknownSDKPath", http.MethodPost, "/api/sdk/v2/nope", herald.ErrRouteNotFound, nil},
		{"ErrGetMarketing", http.MethodGet, marketingPath, herald.ErrMethodNotAllowed, []string{"PATCH"}},
		{"ErrPostMarketing", http.MethodPost, marketingPath, herald.ErrMethodNotAllowed, []string{"PATCH"}},
		{"ErrPatchUser", http.MethodPatch, withdrawPath, herald.ErrMethodNotAllowed, []string{"DELETE"}},
		{"ErrGetPushToken", http.MethodGet, "/api/sdk/v2/push-token", herald.ErrMethodNotAllowed, []string{"POST", "DELETE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := env.Server(t, app, tt.method, tt.path, map[string]any{})
			testenv.WantError(t, res, tt.path, tt.want)
			if tt.wantAllow == nil {
				return
			}
			got := strings.Join(res.Header.Values("Allow"), ",")
			for _, m := range tt.wantAllow {
				if !strings.Contains(got, m) {
					t.Errorf("Allow: got %q, want it to list %s", got, m)
				}
			}
		})
	}
}

func TestCORS(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "tok-1", "u1")
	origin := map[string]string{"Origin": "https://web.example"}
	withKeys := func(h map[string]string, keys ...string) map[string]string {
		out := map[string]string{"Origin": "https://web.example"}
		for k, v := range h {
			out[k] = v
		}
		if len(keys) > 0 {
			out["x-api-key"] = keys[0]
		}
		if len(keys) > 1 {
			out["x-secret-key"] = keys[1]
		}
		return out
	}
	tests := []struct {
		name       string
		req        testenv.Request
		wantStatus int
		wantCORS   bool
	}{
		{"SDKPushToken", testenv.Request{Method: http.MethodPost, URL: "/api/sdk/v2/push-token", Header: withKeys(nil, app.APIKey),
			Body: map[string]any{"deviceId": "d2", "token": "tok-2", "platform": "web", "appSourceVersion": "1.6.0"}}, http.StatusOK, true},
		{"SDKUser", testenv.Request{Method: http.MethodPost, URL: "/api/sdk/v2/user", Header: withKeys(nil, app.APIKey),
			Body: map[string]any{"deviceId": "d1", "userId": "u1"}}, http.StatusOK, true},
		{"SDKErrorStillCORS", testenv.Request{Method: http.MethodPost, URL: "/api/sdk/v2/user", Header: origin,
			Body: map[string]any{"deviceId": "d2", "userId": "u2"}}, http.StatusBadRequest, true},
		{"ServerPatchNoCORS", testenv.Request{Method: http.MethodPatch, URL: marketingPath, Header: withKeys(nil, app.APIKey, app.SecretKey),
			Body: map[string]any{"userId": "u1", "state": map[string]any{"marketing": true}}}, http.StatusOK, false},
		{"ServerDeleteNoCORS", testenv.Request{Method: http.MethodDelete, URL: withdrawPath, Header: withKeys(nil, app.APIKey, app.SecretKey),
			Body: map[string]any{"userId": "nobody"}}, http.StatusNotFound, false},
		{"ServerErrorNoCORS", testenv.Request{Method: http.MethodPatch, URL: marketingPath, Header: origin, Body: "{}"}, http.StatusBadRequest, false},
		{"ServerPreflightNoCORS", testenv.Request{Method: http.MethodOptions, URL: marketingPath, Header: withKeys(map[string]string{
			"Access-Control-Request-Method": "PATCH"})}, http.StatusMethodNotAllowed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := env.Do(t, tt.req)
			if res.Status != tt.wantStatus {
				t.Errorf("status: got %d %s, want %d", res.Status, res.Body, tt.wantStatus)
			}
			got := res.Header.Get("Access-Control-Allow-Origin")
			if tt.wantCORS && got != "*" {
				t.Errorf("Access-Control-Allow-Origin: got %q, want *", got)
			}
			// A page reads a 429's or 503's Retry-After only when exposed.
			if exposed := res.Header.Get("Access-Control-Expose-Headers"); tt.wantCORS && exposed != "Retry-After" {
				t.Errorf("Access-Control-Expose-Headers: got %q, want Retry-After", exposed)
			}
			if !tt.wantCORS {
				for k := range res.Header {
					if strings.HasPrefix(strings.ToLower(k), "access-control-") {
						t.Errorf("header %s: got %q, want none on the Server API", k, res.Header.Get(k))
					}
				}
			}
		})
	}
}

func TestPreflight(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	for _, path := range []string{"/api/sdk/v2/push-token", "/api/sdk/v2/user", "/api/sdk/v2/consent"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			res := env.Do(t, testenv.Request{Method: http.MethodOptions, URL: path, Header: map[string]string{
				"Origin": "https://web.example", "Access-Control-Request-Method": "POST",
				"Access-Control-Request-Headers": "content-type, x-api-key",
			}})
			if res.Status != http.StatusNoContent {
				t.Errorf("status: got %d %s, want 204", res.Status, res.Body)
			}
			want := map[string]string{
				"Access-Control-Allow-Origin": "*",
			}
			for k, v := range want {
				if got := res.Header.Get(k); got != v {
					t.Errorf("%s: got %q, want %q", k, got, v)
				}
			}
			methods := res.Header.Get("Access-Control-Allow-Methods")
			for _, m := range []string{"POST", "PATCH", "DELETE"} {
				if !strings.Contains(methods, m) {
					t.Errorf("Access-Control-Allow-Methods: got %q, want it to list %s", methods, m)
				}
			}
			headers := strings.ToLower(res.Header.Get("Access-Control-Allow-Headers"))
			for _, h := range []string{"content-type", "x-api-key"} {
				if !strings.Contains(headers, h) {
					t.Errorf("Access-Control-Allow-Headers: got %q, want it to list %s", headers, h)
				}
			}
			if strings.Contains(headers, "x-secret-key") {
				t.Errorf("Access-Control-Allow-Headers: got %q, want x-secret-key not allowed", headers)
			}
		})
	}
}
