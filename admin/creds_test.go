package admin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/internal/testenv"
)

// Credentials under abuse (DESIGN 11, "Under concurrency and abuse"):
// single sign-on's binding, emails compared by their ASCII letters,
// setup links, cookies and Origin, each through HTTP on both engines.

// api sends an admin API request as the owner and returns the status and
// body.
func (e *signInEnv) api(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.admin.URL+path, r)
	req.Header.Set("Authorization", "Bearer "+testenv.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// wantOIDC signs in by single sign-on as user and wants it signed in
// (200 with a session) or refused (401 without one).
func (b *browser) wantOIDC(what string, user *mockoidc.MockUser, m *mockoidc.MockOIDC, signedIn bool) {
	b.t.Helper()
	resp, body := b.oidcSignIn(user, m)
	got := resp.StatusCode == http.StatusOK && sessionCookieOf(resp) != nil
	refused := resp.StatusCode == http.StatusUnauthorized && sessionCookieOf(resp) == nil
	switch {
	case signedIn && !got:
		b.t.Errorf("%s: got %d, cookie %v, want 200 with a session:\n%s", what, resp.StatusCode, sessionCookieOf(resp), body)
	case !signedIn && !refused:
		b.t.Errorf("%s: got %d, cookie %v, want 401 without a session:\n%s", what, resp.StatusCode, sessionCookieOf(resp), body)
	}
}

// TestOIDCBindsSubject: the first single sign-on binds the operator to
// the provider's subject; another subject with the same verified email is
// refused as an unknown operator is, and so is a subject bound to another
// operator. Deleting the operator drops the binding.
func TestOIDCBindsSubject(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e, m := newOIDCEnv(t, engine)
		seo := e.operator(t, "seo@example.com", herald.RoleAdmin)
		e.operator(t, "two@example.com", herald.RoleViewer)

		e.browser(t).wantOIDC("first sign-in (s1)", &mockoidc.MockUser{Subject: "s1", Email: "seo@example.com", EmailVerified: true}, m, true)
		e.browser(t).wantOIDC("another subject, same email", &mockoidc.MockUser{Subject: "s2", Email: "Seo@example.com", EmailVerified: true}, m, false)
		e.browser(t).wantOIDC("the bound subject again", &mockoidc.MockUser{Subject: "s1", Email: "SEO@example.com", EmailVerified: true}, m, true)
		e.browser(t).wantOIDC("s1 claiming another operator's email", &mockoidc.MockUser{Subject: "s1", Email: "two@example.com", EmailVerified: true}, m, false)
		e.browser(t).wantOIDC("two's first sign-in (s3)", &mockoidc.MockUser{Subject: "s3", Email: "two@example.com", EmailVerified: true}, m, true)

		// A refusal is recorded as a failed sign-in: actor null, the email.
		recs, _, err := e.store.AccessRecords(context.Background(), access.Filter{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		var refusedRec *access.Record
		for i, r := range recs {
			if r.Route == "GET /oidc/callback" && r.Email == "Seo@example.com" {
				refusedRec = &recs[i]
			}
		}
		if refusedRec == nil || refusedRec.Actor != nil || refusedRec.Status != http.StatusUnauthorized {
			t.Errorf("record of the refused subject: %+v, want actor null, status 401", refusedRec)
		}

		if status, body := e.api(t, "DELETE", "/admin/v1/operators/"+seo.ID, nil); status != http.StatusNoContent {
			t.Fatalf("delete: got %d %s", status, body)
		}
		e.operator(t, "seo@example.com", herald.RoleAdmin)
		e.browser(t).wantOIDC("a new operator of the email, s2", &mockoidc.MockUser{Subject: "s2", Email: "seo@example.com", EmailVerified: true}, m, true)
	})
}

// kelvin is "Kate@example.com" with the Kelvin sign (U+212A), which
// Unicode lowers to a k.
const kelvin = "\u212Aate@example.com"

// TestEmailASCIIOnly: emails compare by their ASCII letters alone, in
// single sign-on, password sign-in and creation: the Kelvin sign is not
// a k, and a local part beyond ASCII matches no one.
func TestEmailASCIIOnly(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e, m := newOIDCEnv(t, engine)
		e.operator(t, "kate@example.com", herald.RoleAdmin)

		e.browser(t).wantOIDC("Kelvin sign by single sign-on", &mockoidc.MockUser{Subject: "k1", Email: kelvin, EmailVerified: true}, m, false)
		if resp, body := e.browser(t).signIn(kelvin, password, "192.0.2.7"); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("Kelvin sign by password: got %d, want 401:\n%s", resp.StatusCode, body)
		}
		e.browser(t).wantSignedIn("KATE@Example.COM", "/") // ASCII case still does not matter

		status, body := e.api(t, "POST", "/admin/v1/operators", map[string]any{"email": kelvin, "name": "K", "role": "viewer"})
		if status != http.StatusBadRequest || !strings.Contains(string(body), `"email"`) {
			t.Errorf("create with the Kelvin sign: got %d %s, want 400 naming email", status, body)
		}
		ops, _ := e.store.Operators(context.Background())
		if len(ops) != 1 {
			t.Errorf("operators: got %d, want 1", len(ops))
		}
		e.browser(t).wantOIDC("kate by single sign-on", &mockoidc.MockUser{Subject: "k2", Email: "Kate@example.com", EmailVerified: true}, m, true)
	})
}

func actorOf(r access.Record) string {
	if r.Actor == nil {
		return "null"
	}
	return *r.Actor
}

// TestSetupRecorded: the setup page and its form leave access records,
// with the link's operator as actor when the link is valid and null when
// it is unknown or gone, and the status answered.
func TestSetupRecorded(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e := newSignInEnv(t, engine)
		o, token := e.addOperator(t, "rec@example.com", herald.RoleViewer)
		b := e.browser(t)
		q := "/setup?" + url.Values{"token": {token}}.Encode()
		resp, body := b.get(q)
		wantStatus(t, resp, body, http.StatusOK)
		resp, body = b.get("/setup?token=unknown")
		wantStatus(t, resp, body, http.StatusNotFound)
		resp, body = b.post("/setup", url.Values{"token": {token}, "password": {"short"}, "confirm": {"short"}})
		wantStatus(t, resp, body, http.StatusBadRequest)
		resp, body = b.post("/setup", url.Values{"token": {token}, "password": {password}, "confirm": {password}})
		wantStatus(t, resp, body, http.StatusSeeOther)
		resp, body = b.get(q)
		wantStatus(t, resp, body, http.StatusGone)

		type seen struct {
			actor, email string
			status       int
		}
		var got []seen
		for _, route := range []string{"GET /setup", "POST /setup"} {
			for _, r := range e.records(t, route) {
				got = append(got, seen{actorOf(r), r.Email, r.Status})
			}
		}
		want := []seen{{o.ID, o.Email, 200}, {"null", "", 404}, {"null", "", 410}, {o.ID, o.Email, 400}, {o.ID, o.Email, 303}}
		if !slices.Equal(got, want) {
			t.Errorf("records of /setup: got %v, want %v", got, want)
		}
	})
}

// TestSetupEndsOtherAccess: a password set through a setup link ends the
// operator's sessions and API tokens made before it.
func TestSetupEndsOtherAccess(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e := newSignInEnv(t, engine)
		o := e.operator(t, "ends@example.com", herald.RoleAdmin)
		before := e.browser(t)
		before.wantSignedIn("ends@example.com", "/")
		status, body := e.api(t, "POST", "/admin/v1/operators/"+o.ID+"/tokens", map[string]any{"name": "ci", "expiresInDays": 30})
		var tok struct{ Token string }
		if status != http.StatusCreated || json.Unmarshal(body, &tok) != nil {
			t.Fatalf("token: got %d %s", status, body)
		}
		status, body = e.api(t, "POST", "/admin/v1/operators/"+o.ID+"/setup-link", nil)
		var link struct {
			SetupURL string `json:"setupUrl"`
		}
		if status != http.StatusOK && status != http.StatusCreated || json.Unmarshal(body, &link) != nil {
			t.Fatalf("setup link: got %d %s", status, body)
		}
		u, _ := url.Parse(link.SetupURL)
		const newPassword = "another horse battery staple"
		resp, page := e.browser(t).post("/setup", url.Values{"token": {u.Query().Get("token")}, "password": {newPassword}, "confirm": {newPassword}})
		wantStatus(t, resp, page, http.StatusSeeOther)

		if resp, _ := before.get("/"); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
			t.Errorf("the session from before the new password: got %d %q, want 303 to /login", resp.StatusCode, resp.Header.Get("Location"))
		}
		req, _ := http.NewRequest("GET", e.admin.URL+"/admin/v1/me", nil)
		req.Header.Set("Authorization", "Bearer "+tok.Token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("the API token from before the new password: got %d, want 401", res.StatusCode)
		}
		if resp, _ := e.browser(t).signIn("ends@example.com", newPassword, "192.0.2.9"); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("signing in with the new password: got %d, want 303", resp.StatusCode)
		}
	})
}

// TestSetupLinkBurst: ten concurrent POSTs with one link set one password:
// exactly one 303, the others 410.
func TestSetupLinkBurst(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e := newSignInEnv(t, engine)
		_, token := e.addOperator(t, "burst@example.com", herald.RoleAdmin)
		const n = 10
		codes := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			b := e.browser(t)
			wg.Go(func() {
				pw := fmt.Sprintf("burst password number %d", i)
				req, _ := http.NewRequest("POST", e.admin.URL+"/setup", strings.NewReader(url.Values{"token": {token}, "password": {pw}, "confirm": {pw}}.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				resp, err := b.hc.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				codes[i] = resp.StatusCode
			})
		}
		wg.Wait()
		won, gone := 0, 0
		for _, c := range codes {
			switch c {
			case http.StatusSeeOther:
				won++
			case http.StatusGone:
				gone++
			}
		}
		if won != 1 || gone != n-1 {
			t.Errorf("statuses %v: got %d 303 and %d 410, want 1 and %d", codes, won, gone, n-1)
		}
	})
}

// TestDisableVoidsSetupLink: disabling an operator voids its pending
// setup link, which then answers 410, and re-enabling does not restore
// it.
func TestDisableVoidsSetupLink(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e := newSignInEnv(t, engine)
		status, body := e.api(t, "POST", "/admin/v1/operators", map[string]any{"email": "void@example.com", "name": "V", "role": "viewer"})
		var op struct {
			OperatorID string
			SetupURL   string `json:"setupUrl"`
		}
		if status != http.StatusCreated || json.Unmarshal(body, &op) != nil {
			t.Fatalf("create: got %d %s", status, body)
		}
		path := strings.TrimPrefix(op.SetupURL, e.admin.URL)
		for _, disabled := range []bool{true, false} {
			if status, body := e.api(t, "PATCH", "/admin/v1/operators/"+op.OperatorID, map[string]any{"disabled": disabled}); status != http.StatusOK {
				t.Fatalf("PATCH disabled %v: got %d %s", disabled, status, body)
			}
			if resp, body := e.browser(t).get(path); resp.StatusCode != http.StatusGone {
				t.Errorf("the link after disabled %v: got %d, want 410:\n%s", disabled, resp.StatusCode, body)
			}
		}
	})
}

// TestCookiesHTTPS: with an https admin URL the session cookie is
// __Host-herald_session, Secure, Path=/, without Domain, and signs the
// browser in; with an http one it stays herald_session, not Secure.
func TestCookiesHTTPS(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		for _, c := range []struct {
			adminURL, name string
			secure         bool
		}{
			{"https://admin.example.test", "__Host-herald_session", true},
			{"", "herald_session", false},
		} {
			e := newSignInEnv(t, engine, func(o *testenv.Options) {
				if c.adminURL != "" {
					o.Config.Admin.AdminURL = c.adminURL
				}
			})
			e.operator(t, "cookie@example.com", herald.RoleAdmin)
			for what, form := range map[string]url.Values{
				"owner":    {"token": {testenv.AdminToken}},
				"operator": {"email": {"cookie@example.com"}, "password": {password}},
			} {
				resp, body := e.browser(t).post("/login", form)
				wantStatus(t, resp, body, http.StatusSeeOther)
				var got *http.Cookie
				for _, ck := range resp.Cookies() {
					if strings.HasSuffix(ck.Name, "herald_session") {
						got = ck
					}
				}
				if got == nil || got.Name != c.name || got.Secure != c.secure || got.Path != "/" || got.Domain != "" || !got.HttpOnly {
					t.Fatalf("%s, admin URL %q: cookie %v, want %s, Secure %v, Path=/, no Domain", what, c.adminURL, got, c.name, c.secure)
				}
				req, _ := http.NewRequest("GET", e.admin.URL+"/", nil)
				req.AddCookie(&http.Cookie{Name: got.Name, Value: got.Value})
				res, err := http.DefaultTransport.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					t.Errorf("%s, admin URL %q: a page with the cookie: got %d, want 200", what, c.adminURL, res.StatusCode)
				}
			}
		}
	})
}

// postWithOrigin posts a form with an Origin header.
func (b *browser) postWithOrigin(origin, path string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", origin)
	req.Header.Set("X-Forwarded-For", "192.0.2.44")
	return b.do(req)
}

// TestForeignOrigin: POST /login and POST /setup from a foreign Origin
// answer 403 and do nothing: no session, no access record, no failure
// counted against the address or the email, the setup link not spent. The
// admin URL's origin and the request's own Host's are let through.
func TestForeignOrigin(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e := newSignInEnv(t, engine, func(o *testenv.Options) { o.Config.Admin.AdminURL = "https://admin.example.test" })
		e.operator(t, "origin@example.com", herald.RoleAdmin)
		_, token := e.addOperator(t, "new@example.com", herald.RoleViewer)
		recs := len(e.records(t, "POST /login"))
		b := e.browser(t)
		for _, origin := range []string{"https://evil.example", "null", "http://admin.example.test", "https://admin.example.test.evil.example"} {
			resp, body := b.postWithOrigin(origin, "/login", url.Values{"email": {"origin@example.com"}, "password": {password}})
			if resp.StatusCode != http.StatusForbidden || sessionCookieOf(resp) != nil || !strings.Contains(body, `class="problem"`) {
				t.Errorf("sign-in from %s: got %d, cookie %v, want 403 on the sign-in page:\n%s", origin, resp.StatusCode, sessionCookieOf(resp), body)
			}
		}
		// More foreign wrong passwords than the throttle's limit: none counts.
		for range 25 {
			if resp, _ := b.postWithOrigin("https://evil.example", "/login", url.Values{"email": {"origin@example.com"}, "password": {"wrong password here"}}); resp.StatusCode != http.StatusForbidden {
				t.Fatalf("foreign wrong password: got %d, want 403", resp.StatusCode)
			}
		}
		if got := len(e.records(t, "POST /login")); got != recs {
			t.Errorf("records of POST /login after foreign posts: got %d, want %d", got, recs)
		}
		resp, body := b.postWithOrigin("https://evil.example", "/setup", url.Values{"token": {token}, "password": {password}, "confirm": {password}})
		wantStatus(t, resp, body, http.StatusForbidden)
		if len(e.records(t, "POST /setup")) != 1 { // e.operator's own setup
			t.Errorf("a foreign POST /setup was recorded")
		}

		for _, origin := range []string{"https://admin.example.test", e.admin.URL} {
			resp, body := e.browser(t).postWithOrigin(origin, "/login", url.Values{"email": {"origin@example.com"}, "password": {password}})
			if resp.StatusCode != http.StatusSeeOther {
				t.Errorf("sign-in from %s: got %d, want 303:\n%s", origin, resp.StatusCode, body)
			}
		}
		resp, body = e.browser(t).postWithOrigin(e.admin.URL, "/setup", url.Values{"token": {token}, "password": {password}, "confirm": {password}})
		if resp.StatusCode != http.StatusSeeOther {
			t.Errorf("setup from the dashboard's own origin after a foreign one: got %d, want 303 (the link unspent):\n%s", resp.StatusCode, body)
		}
	})
}

// TestViewerNoWebhookURL: the admin API answers an app's webhookUrl to an
// operator and the owner, and null to a viewer, in the app and the list.
func TestViewerNoWebhookURL(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e := newSignInEnv(t, engine)
		status, body := e.api(t, "POST", "/admin/v1/apps", map[string]any{"name": "Hooked"})
		var app struct{ AppID string }
		if status != http.StatusCreated || json.Unmarshal(body, &app) != nil {
			t.Fatalf("create app: got %d %s", status, body)
		}
		const hook = "https://hooks.example.com/herald?key=receiver-secret"
		if err := e.store.SetWebhook(context.Background(), app.AppID, hook, e.node.MasterKey.Seal([]byte("whsec"))); err != nil {
			t.Fatal(err)
		}
		bearer := map[string]string{"owner": testenv.AdminToken}
		for _, role := range []string{"viewer", "operator"} {
			status, body := e.api(t, "POST", "/admin/v1/operators", map[string]any{"email": role + "@example.com", "name": role, "role": role})
			var op struct{ OperatorID string }
			if status != http.StatusCreated || json.Unmarshal(body, &op) != nil {
				t.Fatalf("add %s: got %d %s", role, status, body)
			}
			status, body = e.api(t, "POST", "/admin/v1/operators/"+op.OperatorID+"/tokens", map[string]any{"name": "t", "expiresInDays": 1})
			var tok struct{ Token string }
			if status != http.StatusCreated || json.Unmarshal(body, &tok) != nil {
				t.Fatalf("token of %s: got %d %s", role, status, body)
			}
			bearer[role] = tok.Token
		}
		get := func(token, path string, v any) {
			t.Helper()
			req, _ := http.NewRequest("GET", e.admin.URL+path, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if err := json.NewDecoder(resp.Body).Decode(v); err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %d, %v", path, resp.StatusCode, err)
			}
		}
		for who, want := range map[string]any{"owner": hook, "operator": hook, "viewer": nil} {
			var one map[string]any
			get(bearer[who], "/admin/v1/apps/"+app.AppID, &one)
			var list struct{ Apps []map[string]any }
			get(bearer[who], "/admin/v1/apps", &list)
			if v, ok := one["webhookUrl"]; !ok || v != want {
				t.Errorf("%s: GET app webhookUrl %v (present %v), want %v", who, v, ok, want)
			}
			if len(list.Apps) != 1 || list.Apps[0]["webhookUrl"] != want {
				t.Errorf("%s: list webhookUrl %v, want %v", who, list.Apps, want)
			}
		}
	})
}

// TestOperatorFormNeedsScope: the Operators forms without a scope (or
// with an unknown one) answer 400 naming it, and nothing is created or
// widened to every app.
func TestOperatorFormNeedsScope(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e := newSignInEnv(t, engine)
		status, body := e.api(t, "POST", "/admin/v1/apps", map[string]any{"name": "Scoped"})
		var app struct{ AppID string }
		if status != http.StatusCreated || json.Unmarshal(body, &app) != nil {
			t.Fatalf("create app: got %d %s", status, body)
		}
		b := e.browser(t)
		b.login()
		for _, scope := range []string{"", "all"} {
			form := url.Values{"csrf": {b.csrf("/operators")}, "email": {"noscope@example.com"}, "name": {"N"}, "role": {"admin"}}
			if scope != "" {
				form.Set("scope", scope)
			}
			resp, page := b.post("/operators", form)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, "scope") {
				t.Errorf("add with scope %q: got %d, want 400 naming scope:\n%s", scope, resp.StatusCode, page)
			}
		}
		if ops, _ := e.store.Operators(context.Background()); len(ops) != 0 {
			t.Errorf("operators after refused adds: %+v, want none", ops)
		}

		resp, page := b.post("/operators", url.Values{"csrf": {b.csrf("/operators")}, "email": {"some@example.com"}, "name": {"S"},
			"role": {"viewer"}, "scope": {"some"}, "app": {app.AppID}})
		wantStatus(t, resp, page, http.StatusSeeOther)
		o, _, err := e.store.OperatorByEmail(context.Background(), "some@example.com")
		if err != nil {
			t.Fatal(err)
		}
		path := "/operators/" + o.ID
		resp, page = b.post(path, url.Values{"csrf": {b.csrf(path)}, "name": {"S"}, "role": {"admin"}})
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, "scope") {
			t.Errorf("edit without scope: got %d, want 400 naming scope:\n%s", resp.StatusCode, page)
		}
		if got, _ := e.store.Operator(context.Background(), o.ID); got.Role != herald.RoleViewer || !slices.Equal(got.Apps, []string{app.AppID}) {
			t.Errorf("after a refused edit: role %v apps %v, want viewer of %s alone", got.Role, got.Apps, app.AppID)
		}
	})
}
