package admin_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/fcm"
	"github.com/heraldpush/herald/identity"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/server"
	"github.com/heraldpush/herald/webhook"
)

var (
	apiKeyFormat    = regexp.MustCompile(`^hk_[0-9A-Za-z]{32}$`)
	secretKeyFormat = regexp.MustCompile(`^hs_[0-9A-Za-z]{40}$`)
)

// appView is the admin JSON shape of an app, with SecretKey a pointer so
// that its absence shows.
type appView struct {
	AppID             string         `json:"appId"`
	Name              string         `json:"name"`
	APIKey            string         `json:"apiKey"`
	SecretKey         *string        `json:"secretKey"`
	Tier              string         `json:"tier"`
	AppUserEnabled    bool           `json:"appUserEnabled"`
	Registered        bool           `json:"registered"`
	TimeZone          string         `json:"timeZone"`
	DefaultConsent    herald.Consent `json:"defaultConsent"`
	HasFCMCredentials bool           `json:"hasFcmCredentials"`
	WebhookURL        *string        `json:"webhookUrl"`
	CreatedAt         string         `json:"createdAt"`
}

func getApp(t *testing.T, env *testenv.Env, id string) appView {
	t.Helper()
	res := env.AdminDo(t, http.MethodGet, "/admin/v1/apps/"+id, nil)
	if res.Status != http.StatusOK {
		t.Fatalf("get app: got %d %s, want 200", res.Status, res.Body)
	}
	if bytes.Contains(res.Body, []byte("secretKey")) {
		t.Errorf("GET app: got %s, want no secretKey member", res.Body)
	}
	var a appView
	res.Decode(t, &a)
	return a
}

// serverStatus calls PATCH marketing for a never-registered user with the
// given keys: 404 ERR-AB-ACS-33 means the keys were accepted.
func serverCall(t *testing.T, env *testenv.Env, apiKey, secret string) testenv.Response {
	t.Helper()
	return env.Server(t, testenv.App{APIKey: apiKey, SecretKey: secret}, http.MethodPatch, "/api/app-user/v2/marketing",
		map[string]any{"userId": "nobody", "state": map[string]any{"marketing": true}})
}

func TestAdminAuth(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.CreateApp(t, nil)
	routes := []struct{ method, path string }{
		{http.MethodPost, "/admin/v1/apps"},
		{http.MethodGet, "/admin/v1/apps"},
		{http.MethodGet, "/admin/v1/apps/" + app.ID},
		{http.MethodPatch, "/admin/v1/apps/" + app.ID},
		{http.MethodDelete, "/admin/v1/apps/" + app.ID},
		{http.MethodPost, "/admin/v1/apps/" + app.ID + "/secret-key"},
		{http.MethodPut, "/admin/v1/apps/" + app.ID + "/fcm-credentials"},
		{http.MethodDelete, "/admin/v1/apps/" + app.ID + "/fcm-credentials"},
		{http.MethodPut, "/admin/v1/apps/" + app.ID + "/webhook"},
		{http.MethodDelete, "/admin/v1/apps/" + app.ID + "/webhook"},
		{http.MethodGet, "/admin/v1/apps/" + app.ID + "/users/u1"},
	}
	notBearer := herald.ErrUnauthorized.With(herald.Detail{Field: "Authorization", Reason: "must be Bearer followed by the admin token"})
	headers := []struct {
		name string
		auth string
		want *herald.Error
	}{
		{"ErrNone", "", herald.ErrUnauthorized.With(herald.MissingHeader("Authorization"))},
		{"ErrWrongToken", "Bearer " + testenv.AdminToken + "x", herald.ErrUnauthorized},
		{"ErrPrefixOfToken", "Bearer " + testenv.AdminToken[:10], herald.ErrUnauthorized},
		{"ErrEmptyBearer", "Bearer ", notBearer}, // the value arrives trimmed: "Bearer"
		{"ErrBasic", "Basic " + testenv.AdminToken, notBearer},
		{"ErrBareToken", testenv.AdminToken, notBearer},
		{"ErrAPISecret", "Bearer " + app.SecretKey, herald.ErrUnauthorized},
	}
	// Refused bearer tokens are counted per address (all of these come
	// from 127.0.0.1): the first identity.AttemptLimit answer 401, the rest
	// 429 with Retry-After. A header that presents no token is not
	// counted. The subtests run in order, so the count is known.
	refused := 0
	for _, h := range headers {
		t.Run(h.name, func(t *testing.T) {
			counted := strings.HasPrefix(h.auth, "Bearer ") && strings.TrimSpace(h.auth) != "Bearer"
			for _, r := range routes {
				hdr := map[string]string{}
				if h.auth != "" {
					hdr["Authorization"] = h.auth
				}
				res := testenv.Send(t, http.DefaultClient, env.Admin.URL, testenv.Request{Method: r.method, URL: r.path, Header: hdr, Body: map[string]any{"name": "x"}})
				if counted {
					if refused++; refused > identity.AttemptLimit {
						testenv.WantError(t, res, r.path, herald.ErrTooManyRequests)
						if res.Header.Get("Retry-After") == "" {
							t.Errorf("%s %s, refused token %d: no Retry-After", r.method, r.path, refused)
						}
						continue
					}
				}
				testenv.WantError(t, res, r.path, h.want)
				if !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("%s %s WWW-Authenticate: got %q, want Bearer …", r.method, r.path, res.Header.Get("WWW-Authenticate"))
				}
			}
		})
	}
	// The owner's token still works from the throttled address.
	if res := env.AdminDo(t, http.MethodGet, "/admin/v1/apps", nil); res.Status != http.StatusOK {
		t.Errorf("the owner's token after %d refused tokens: got %d, want 200", refused, res.Status)
	}
	// Nothing of the refused calls happened.
	if a := getApp(t, env, app.ID); a.Name != "test app" {
		t.Errorf("app after refused calls: got %+v, want unchanged", a)
	}
}

func TestAdminRouting(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	testenv.WantError(t, env.AdminDo(t, http.MethodGet, "/admin/v1/nothing", nil), "/admin/v1/nothing", herald.ErrRouteNotFound)
	res := env.AdminDo(t, http.MethodPut, "/admin/v1/apps", nil)
	testenv.WantError(t, res, "/admin/v1/apps", herald.ErrMethodNotAllowed)
	if allow := strings.Join(res.Header.Values("Allow"), ","); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
		t.Errorf("Allow: got %q, want GET and POST", allow)
	}
}

func TestCreateApp(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)

	t.Run("Defaults", func(t *testing.T) {
		t.Parallel()
		res := env.AdminDo(t, http.MethodPost, "/admin/v1/apps", map[string]any{"name": "  My App  "})
		if res.Status != http.StatusCreated {
			t.Fatalf("got %d %s, want 201", res.Status, res.Body)
		}
		var a appView
		res.Decode(t, &a)
		if !strings.HasPrefix(a.AppID, "app_") {
			t.Errorf("appId: got %q, want app_…", a.AppID)
		}
		if !apiKeyFormat.MatchString(a.APIKey) {
			t.Errorf("apiKey: got %q, want hk_ + 32 base62", a.APIKey)
		}
		if a.SecretKey == nil || !secretKeyFormat.MatchString(*a.SecretKey) {
			t.Errorf("secretKey: got %v, want hs_ + 40 base62", a.SecretKey)
		}
		want := appView{AppID: a.AppID, Name: "My App", APIKey: a.APIKey, SecretKey: a.SecretKey, Tier: "free", Registered: true,
			TimeZone: "Asia/Seoul", CreatedAt: a.CreatedAt}
		if a.Name != want.Name || a.Tier != want.Tier || a.AppUserEnabled || !a.Registered || a.TimeZone != want.TimeZone ||
			a.HasFCMCredentials || a.WebhookURL != nil || a.DefaultConsent != (herald.Consent{}) || a.CreatedAt == "" {
			t.Errorf("got %+v, want %+v", a, want)
		}

		got := getApp(t, env, a.AppID)
		if got.APIKey != a.APIKey || got.Name != "My App" || got.SecretKey != nil {
			t.Errorf("GET: got %+v, want the app without its secret", got)
		}
		// The keys work at once.
		testenv.WantError(t, serverCall(t, env, a.APIKey, *a.SecretKey), "/api/app-user/v2/marketing",
			herald.ErrMarketingUnavailable.With((herald.App{Tier: herald.TierFree}).AppUserProblems()...))
	})
	t.Run("AllSettings", func(t *testing.T) {
		t.Parallel()
		res := env.AdminDo(t, http.MethodPost, "/admin/v1/apps", map[string]any{"name": "B", "tier": "enterprise",
			"appUserEnabled": true, "registered": false, "timeZone": "Europe/Paris",
			"defaultConsent": map[string]any{"marketing": true, "marketingNight": true}})
		if res.Status != http.StatusCreated {
			t.Fatalf("got %d %s, want 201", res.Status, res.Body)
		}
		var a appView
		res.Decode(t, &a)
		got := getApp(t, env, a.AppID)
		if got.Tier != "enterprise" || !got.AppUserEnabled || got.Registered || got.TimeZone != "Europe/Paris" ||
			got.DefaultConsent != (herald.Consent{Marketing: true, MarketingNight: true}) {
			t.Errorf("got %+v, want the settings given", got)
		}
	})
	t.Run("List", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t)
		a := env.CreateApp(t, map[string]any{"name": "one"})
		b := env.CreateApp(t, map[string]any{"name": "two"})
		res := env.AdminDo(t, http.MethodGet, "/admin/v1/apps", nil)
		if res.Status != http.StatusOK {
			t.Fatalf("got %d %s, want 200", res.Status, res.Body)
		}
		for _, s := range []string{a.SecretKey, b.SecretKey, "secretKey"} {
			if bytes.Contains(res.Body, []byte(s)) {
				t.Errorf("list: got %s, want no secret key", res.Body)
			}
		}
		var list struct{ Apps []appView }
		res.Decode(t, &list)
		// Oldest first; two apps created in the same millisecond may come
		// in either order.
		got := map[string]string{}
		for _, x := range list.Apps {
			got[x.AppID] = x.Name
		}
		if len(list.Apps) != 2 || got[a.ID] != "one" || got[b.ID] != "two" {
			t.Errorf("got %+v, want %s (one) and %s (two)", list.Apps, a.ID, b.ID)
		}
	})
	t.Run("ListEmpty", func(t *testing.T) {
		t.Parallel()
		res := testenv.New(t).AdminDo(t, http.MethodGet, "/admin/v1/apps", nil)
		if got := strings.TrimSpace(string(res.Body)); res.Status != http.StatusOK || got != `{"apps":[]}` {
			t.Errorf("got %d %s, want 200 {\"apps\":[]}", res.Status, got)
		}
	})
}

func TestCreateAppInvalid(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	tests := []struct {
		name      string
		body      any
		wantField string
	}{
		{"ErrNoName", map[string]any{"tier": "business"}, "name"},
		{"ErrEmptyName", map[string]any{"name": "   "}, "name"},
		{"ErrLongName", map[string]any{"name": strings.Repeat("x", 201)}, "name"},
		{"ErrNameNotString", map[string]any{"name": 5}, "name"},
		{"ErrTier", map[string]any{"name": "a", "tier": "gold"}, "tier"},
		{"ErrTierNotString", map[string]any{"name": "a", "tier": 3}, "tier"},
		{"ErrDefaultConsentNotObject", map[string]any{"name": "a", "defaultConsent": true}, "defaultConsent"},
		{"ErrDefaultMarketingNotBool", map[string]any{"name": "a", "defaultConsent": map[string]any{"marketing": "yes"}}, "defaultConsent.marketing"},
		{"ErrTimeZone", map[string]any{"name": "a", "timeZone": "Mars/Base"}, "timeZone"},
		{"ErrTimeZoneLocal", map[string]any{"name": "a", "timeZone": "Local"}, "timeZone"},
		{"ErrTimeZoneEmpty", map[string]any{"name": "a", "timeZone": ""}, "timeZone"},
		{"ErrDefaultNightWithoutMarketing", map[string]any{"name": "a", "defaultConsent": map[string]any{"marketingNight": true}}, "defaultConsent.marketingNight"},
		{"ErrAppUserEnabledString", map[string]any{"name": "a", "appUserEnabled": "yes"}, "appUserEnabled"},
		{"ErrNotJSON", "{name", "body"},
		{"ErrArray", []any{}, "body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := testenv.WantError(t, env.AdminDo(t, http.MethodPost, "/admin/v1/apps", tt.body), "/admin/v1/apps", herald.ErrInvalidRequest)
			found := false
			for _, d := range got.Details {
				found = found || d.Field == tt.wantField
			}
			if !found {
				t.Errorf("details: got %+v, want one on %q", got.Details, tt.wantField)
			}
			for _, d := range got.Details {
				if strings.Contains(d.Reason, "herald.") || strings.Contains(d.Reason, "admin.") {
					t.Errorf("reason %q: got a Go type name, want JSON terms", d.Reason)
				}
			}
		})
	}
	t.Cleanup(func() {
		res := env.AdminDo(t, http.MethodGet, "/admin/v1/apps", nil)
		if got := strings.TrimSpace(string(res.Body)); got != `{"apps":[]}` {
			t.Errorf("apps after refused creates: got %s, want none", got)
		}
	})
}

// TestNotJSONReason checks that an admin body that is not valid JSON says
// so, with the byte the parser stopped at.
func TestNotJSONReason(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	for _, tt := range []struct{ body, reason string }{
		{`{"name":"a",}`, "is not valid JSON: invalid character '}' looking for beginning of object key string at byte 13"},
		{`{"name":"a"`, "is not valid JSON: unexpected end of JSON input at byte 11"},
		{`["a"]`, "must be a JSON object"},
	} {
		got := testenv.WantError(t, env.AdminDo(t, http.MethodPost, "/admin/v1/apps", []byte(tt.body)), "/admin/v1/apps", herald.ErrInvalidRequest)
		if want := (herald.Detail{Field: "body", Reason: tt.reason}); len(got.Details) != 1 || got.Details[0] != want {
			t.Errorf("%s: details %+v, want [%+v]", tt.body, got.Details, want)
		}
	}
}

func TestPatchApp(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.CreateApp(t, map[string]any{"name": "before", "tier": "basic"})
	path := "/admin/v1/apps/" + app.ID

	res := env.AdminDo(t, http.MethodPatch, path, map[string]any{"tier": "business", "appUserEnabled": true, "timeZone": "America/New_York"})
	if res.Status != http.StatusOK {
		t.Fatalf("got %d %s, want 200", res.Status, res.Body)
	}
	if bytes.Contains(res.Body, []byte("secretKey")) {
		t.Errorf("PATCH answer: got %s, want no secretKey", res.Body)
	}
	got := getApp(t, env, app.ID)
	if got.Name != "before" || got.Tier != "business" || !got.AppUserEnabled || got.TimeZone != "America/New_York" || !got.Registered {
		t.Errorf("got %+v, want name kept, tier business, feature on, New York", got)
	}

	t.Run("ErrInvalidChangesNothing", func(t *testing.T) {
		for _, body := range []any{
			map[string]any{"name": "after", "tier": "platinum"},
			map[string]any{"name": ""},
			map[string]any{"timeZone": "Nowhere"},
			map[string]any{"tier": 3},
			"{",
		} {
			testenv.WantError(t, env.AdminDo(t, http.MethodPatch, path, body), path, herald.ErrInvalidRequest)
		}
		if after := getApp(t, env, app.ID); after != got {
			t.Errorf("got %+v, want unchanged %+v", after, got)
		}
	})
	t.Run("ErrUnknownApp", func(t *testing.T) {
		p := "/admin/v1/apps/app_nope"
		testenv.WantError(t, env.AdminDo(t, http.MethodPatch, p, map[string]any{"name": "x"}), p, herald.ErrNotFound)
		testenv.WantError(t, env.AdminDo(t, http.MethodGet, p, nil), p, herald.ErrNotFound)
	})
}

func TestDeleteApp(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	keep := env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "tok-1", "u1")
	env.RegisterToken(t, keep, "d1", "tok-1", "u1")
	path := "/admin/v1/apps/" + app.ID

	if res := env.AdminDo(t, http.MethodDelete, path, nil); res.Status != http.StatusNoContent {
		t.Fatalf("got %d %s, want 204", res.Status, res.Body)
	}
	testenv.WantError(t, env.AdminDo(t, http.MethodGet, path, nil), path, herald.ErrNotFound)
	testenv.WantError(t, env.AdminDo(t, http.MethodDelete, path, nil), path, herald.ErrNotFound)
	testenv.WantError(t, serverCall(t, env, app.APIKey, app.SecretKey), "/api/app-user/v2/marketing", herald.ErrUnknownAPIKey)
	if n := env.TokenCount(t, app, "tok-1"); n != 0 {
		t.Errorf("devices of the deleted app: got %d, want 0", n)
	}
	if u := env.User(t, keep, "u1"); len(u.Devices) != 1 {
		t.Errorf("other app's user: got %+v, want its device kept", u)
	}
}

func TestReissueSecretKey(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	const marketingPath = "/api/app-user/v2/marketing"
	testenv.WantError(t, serverCall(t, env, app.APIKey, app.SecretKey), marketingPath, herald.ErrMarketingNoUser)

	res := env.AdminDo(t, http.MethodPost, "/admin/v1/apps/"+app.ID+"/secret-key", nil)
	if res.Status != http.StatusOK {
		t.Fatalf("got %d %s, want 200", res.Status, res.Body)
	}
	var out map[string]string
	res.Decode(t, &out)
	secret := out["secretKey"]
	if len(out) != 1 || !secretKeyFormat.MatchString(secret) || secret == app.SecretKey {
		t.Fatalf("got %s, want {secretKey: a new hs_ key}", res.Body)
	}

	testenv.WantError(t, serverCall(t, env, app.APIKey, app.SecretKey), marketingPath, herald.ErrBadSecretKey)
	testenv.WantError(t, serverCall(t, env, app.APIKey, secret), marketingPath, herald.ErrMarketingNoUser)
	if a := getApp(t, env, app.ID); a.APIKey != app.APIKey {
		t.Errorf("apiKey: got %q, want unchanged %q", a.APIKey, app.APIKey)
	}
	p := "/admin/v1/apps/app_nope/secret-key"
	testenv.WantError(t, env.AdminDo(t, http.MethodPost, p, nil), p, herald.ErrNotFound)
}

func TestFCMCredentials(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.CreateApp(t, nil)
	sa := testenv.NewServiceAccount(t)
	path := "/admin/v1/apps/" + app.ID + "/fcm-credentials"
	put := func(body []byte) testenv.Response {
		return env.AdminDo(t, http.MethodPut, path, body)
	}
	stored := func() []byte {
		t.Helper()
		var b []byte
		if err := env.DB.Reader.QueryRow(`SELECT fcm_credentials FROM apps WHERE id = ?`, app.ID).Scan(&b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	pemLines := strings.Split(strings.TrimSpace(sa.PrivateKeyPEM), "\n")
	secrets := []string{sa.ClientEmail, "BEGIN PRIVATE KEY", pemLines[1], pemLines[len(pemLines)-2], `"service_account"`}

	invalid := []struct {
		name string
		body []byte
	}{
		{"ErrNotJSON", []byte("{")},
		{"ErrEmpty", nil},
		{"ErrType", sa.With(t, "type", "authorized_user")},
		{"ErrNoProject", sa.With(t, "project_id", nil)},
		{"ErrNoClientEmail", sa.With(t, "client_email", nil)},
		{"ErrPrivateKeyGarbage", sa.With(t, "private_key", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")},
		{"ErrPrivateKeyNotPEM", sa.With(t, "private_key", "hello")},
		{"ErrTokenURI", sa.With(t, "token_uri", "https://attacker.example/token")},
		{"ErrNoTokenURI", sa.With(t, "token_uri", nil)},
		{"ErrTooLarge", append(sa.With(t, "pad", strings.Repeat("x", 70<<10)), ' ')},
		{"ErrInvalidUTF8", bytes.Replace(sa.JSON, []byte(sa.ClientEmail), []byte("a\xffb@example.com"), 1)},
		{"ErrClientConfig", []byte(`{"project_info": {"project_id": "p"}, "client": []}`)},
	}
	checkInvalid := func(t *testing.T, wantStored []byte, wantHas bool) {
		for _, tt := range invalid {
			t.Run(tt.name, func(t *testing.T) {
				testenv.WantError(t, put(tt.body), path, herald.ErrInvalidRequest)
			})
		}
		if got := stored(); !bytes.Equal(got, wantStored) {
			t.Errorf("stored credentials changed by refused uploads")
		}
		if got := getApp(t, env, app.ID).HasFCMCredentials; got != wantHas {
			t.Errorf("hasFcmCredentials: got %v, want %v", got, wantHas)
		}
	}

	t.Run("ErrInvalidWhenNone", func(t *testing.T) { checkInvalid(t, nil, false) })
	t.Run("Reasons", func(t *testing.T) {
		for _, tt := range []struct {
			name string
			body []byte
			want herald.Detail
		}{
			{"InvalidUTF8", bytes.Replace(sa.JSON, []byte(sa.ClientEmail), []byte("a\xffb@example.com"), 1),
				herald.Detail{Field: "client_email", Reason: "must be valid UTF-8"}},
			{"InvalidUTF8OutsideStrings", append([]byte("\xff"), sa.JSON...), herald.Detail{Field: "body", Reason: "must be UTF-8 text"}},
			{"ClientConfig", []byte(`{"project_info": {"project_number": "1", "project_id": "p"}, "client": [{"client_info": {}}], "configuration_version": "1"}`),
				herald.Detail{Field: "body", Reason: "fcm: invalid service account: " + fcm.ReasonClientConfig}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				var body struct{ Details []herald.Detail }
				res := put(tt.body)
				res.Decode(t, &body)
				if res.Status != http.StatusBadRequest || len(body.Details) != 1 || body.Details[0] != tt.want {
					t.Errorf("got %d %s, want 400 with details [%+v]", res.Status, res.Body, tt.want)
				}
			})
		}
	})
	t.Run("Put", func(t *testing.T) {
		res := put(sa.JSON)
		if res.Status != http.StatusOK {
			t.Fatalf("got %d %s, want 200", res.Status, res.Body)
		}
		for _, s := range secrets {
			if bytes.Contains(res.Body, []byte(s)) {
				t.Errorf("the answer holds %q", s)
			}
		}
		if !getApp(t, env, app.ID).HasFCMCredentials {
			t.Errorf("hasFcmCredentials: got false, want true")
		}
	})
	t.Run("StoredSealed", func(t *testing.T) {
		b := stored()
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("apps.fcm_credentials holds %q in plaintext", s)
			}
		}
		plain, err := env.MasterKey.Open(b)
		if err != nil || !bytes.Equal(plain, sa.JSON) {
			t.Errorf("Open(stored): got (%d bytes, %v), want the uploaded file", len(plain), err)
		}
		for _, f := range []string{env.DBPath, env.DBPath + "-wal"} {
			raw, err := os.ReadFile(f)
			if os.IsNotExist(err) {
				continue
			} else if err != nil {
				t.Fatal(err)
			}
			for _, s := range secrets[:4] {
				if bytes.Contains(raw, []byte(s)) {
					t.Errorf("%s holds %q in plaintext", f, s)
				}
			}
		}
	})
	t.Run("ErrInvalidWhenSet", func(t *testing.T) { checkInvalid(t, stored(), true) })
	t.Run("Delete", func(t *testing.T) {
		if res := env.AdminDo(t, http.MethodDelete, path, nil); res.Status != http.StatusNoContent {
			t.Fatalf("got %d %s, want 204", res.Status, res.Body)
		}
		if getApp(t, env, app.ID).HasFCMCredentials {
			t.Errorf("hasFcmCredentials: got true, want false")
		}
		if b := stored(); len(b) != 0 {
			t.Errorf("stored: got %d bytes, want none", len(b))
		}
	})
	t.Run("ErrUnknownApp", func(t *testing.T) {
		p := "/admin/v1/apps/app_nope/fcm-credentials"
		testenv.WantError(t, env.AdminDo(t, http.MethodPut, p, sa.JSON), p, herald.ErrNotFound)
		testenv.WantError(t, env.AdminDo(t, http.MethodDelete, p, nil), p, herald.ErrNotFound)
	})
}

func TestWebhook(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		allowPrivate bool
		url          any
		wantOK       bool
	}{
		{"HTTPS", false, "https://hooks.example.com/herald", true},
		{"HTTPSPublicIP", false, "https://8.8.8.8/hook", true},
		{"ErrLoopbackHTTP", false, "http://127.0.0.1:9000/hook", false},
		{"ErrLoopbackHTTPS", false, "https://127.0.0.1/hook", false},
		{"ErrPrivateHTTPS", false, "https://10.0.0.1/hook", false},
		{"ErrLocalhost", false, "https://localhost/hook", false},
		{"ErrHTTPPublic", false, "http://hooks.example.com/herald", false},
		{"ErrRelative", false, "/hook", false},
		{"ErrUserInfo", false, "https://u:p@hooks.example.com/", false},
		{"ErrNotString", false, 5, false},
		{"ErrMissing", false, nil, false},
		{"PrivateAllowedHTTP", true, "http://127.0.0.1:9000/hook", true},
		{"PrivateAllowedHTTPS", true, "https://10.0.0.1/hook", true},
		{"ErrPrivateAllowedFTP", true, "ftp://127.0.0.1/hook", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := testenv.New(t, testenv.Options{Config: server.Config{Webhook: webhook.SenderOptions{AllowPrivate: tt.allowPrivate}}})
			app := env.CreateApp(t, nil)
			path := "/admin/v1/apps/" + app.ID + "/webhook"
			body := map[string]any{}
			if tt.url != nil {
				body["url"] = tt.url
			}
			res := env.AdminDo(t, http.MethodPut, path, body)
			if !tt.wantOK {
				testenv.WantError(t, res, path, herald.ErrInvalidRequest)
				if got := getApp(t, env, app.ID).WebhookURL; got != nil {
					t.Errorf("webhookUrl: got %q, want null", *got)
				}
				return
			}
			if res.Status != http.StatusOK {
				t.Fatalf("got %d %s, want 200", res.Status, res.Body)
			}
			var out map[string]string
			res.Decode(t, &out)
			if len(out) != 2 || out["url"] != tt.url || !strings.HasPrefix(out["secret"], "whsec_") || len(out["secret"]) < 20 {
				t.Errorf("got %s, want {url, secret: whsec_…}", res.Body)
			}
			if got := getApp(t, env, app.ID).WebhookURL; got == nil || *got != tt.url {
				t.Errorf("webhookUrl: got %v, want %v", got, tt.url)
			}
			var sealed []byte
			if err := env.DB.Reader.QueryRow(`SELECT webhook_secret FROM apps WHERE id = ?`, app.ID).Scan(&sealed); err != nil {
				t.Fatal(err)
			}
			secretKey := strings.TrimPrefix(out["secret"], "whsec_")
			if bytes.Contains(sealed, []byte(secretKey)) {
				t.Errorf("apps.webhook_secret holds the secret in plaintext")
			}
			if plain, err := env.MasterKey.Open(sealed); err != nil || string(plain) != out["secret"] {
				t.Errorf("Open(webhook_secret): got (%q, %v), want the secret", plain, err)
			}

			if res := env.AdminDo(t, http.MethodDelete, path, nil); res.Status != http.StatusNoContent {
				t.Fatalf("DELETE: got %d %s, want 204", res.Status, res.Body)
			}
			if got := getApp(t, env, app.ID).WebhookURL; got != nil {
				t.Errorf("webhookUrl after DELETE: got %q, want null", *got)
			}
		})
	}
}

func TestGetUser(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "fcm-token-abcdefgh12345678", 42)

	t.Run("OK", func(t *testing.T) {
		res := env.AdminDo(t, http.MethodGet, "/admin/v1/apps/"+app.ID+"/users/42", nil)
		if res.Status != http.StatusOK {
			t.Fatalf("got %d %s, want 200", res.Status, res.Body)
		}
		if bytes.Contains(res.Body, []byte("fcm-token-abcdefgh")) {
			t.Errorf("got %s, want only the token's suffix", res.Body)
		}
		var got map[string]any
		res.Decode(t, &got)
		// The registration's time, which the test does not hold.
		dev := got["devices"].([]any)[0].(map[string]any)
		if seen, err := time.Parse(time.RFC3339Nano, fmt.Sprint(dev["lastSeenAt"])); err != nil || seen.IsZero() {
			t.Errorf("lastSeenAt: got %v, want the registration's time", dev["lastSeenAt"])
		}
		delete(dev, "lastSeenAt")
		want := map[string]any{"userId": "42", "state": "registered", "marketing": false, "marketingNight": false, "tags": map[string]any{},
			"devices": []any{map[string]any{"deviceId": "d1", "platform": "android", "appSourceVersion": "1.6.0",
				"tokenSuffix": "12345678", "marketing": false, "marketingNight": false, "topics": []any{}}}}
		if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
			t.Errorf("got %s, want %s", g, w)
		}
	})
	for _, tt := range []struct{ name, path string }{
		{"ErrNeverRegistered", "/admin/v1/apps/" + app.ID + "/users/43"},
		{"ErrUnknownApp", "/admin/v1/apps/app_nope/users/42"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			testenv.WantError(t, env.AdminDo(t, http.MethodGet, tt.path, nil), tt.path, herald.ErrNotFound)
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
