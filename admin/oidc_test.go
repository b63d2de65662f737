package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/admin"
	"github.com/heraldpush/herald/identity"
	"github.com/heraldpush/herald/internal/testenv"
)

// newOIDCEnv is a sign-in environment whose single sign-on provider is a
// real one in process (mockoidc).
func newOIDCEnv(t *testing.T, engine testenv.Engine) (*signInEnv, *mockoidc.MockOIDC) {
	t.Helper()
	m, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown() })
	e := newSignInEnv(t, engine, func(o *testenv.Options) {
		o.Config.Admin.OIDC = admin.OIDCConfig{Issuer: m.Issuer(), ClientID: m.ClientID, ClientSecret: m.ClientSecret}
	})
	return e, m
}

// oidcSignIn goes through single sign-on as user: the button, the
// provider, and back to the callback, whose answer it returns.
func (b *browser) oidcSignIn(user *mockoidc.MockUser, m *mockoidc.MockOIDC) (*http.Response, string) {
	b.t.Helper()
	m.QueueUser(user)
	resp, body := b.get("/oidc/login")
	to := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(to, m.AuthorizationEndpoint()) {
		b.t.Fatalf("single sign-on button: got %d %q, want 303 to the provider:\n%s", resp.StatusCode, to, body)
	}
	q, _ := url.Parse(to)
	for _, p := range []string{"state", "nonce", "code_challenge"} {
		if q.Query().Get(p) == "" {
			b.t.Errorf("authorization request: no %s in %s", p, to)
		}
	}
	if q.Query().Get("code_challenge_method") != "S256" {
		b.t.Errorf("authorization request: code_challenge_method %q, want S256", q.Query().Get("code_challenge_method"))
	}
	// The provider signs the user in and sends the browser back.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(to)
	if err != nil {
		b.t.Fatal(err)
	}
	res.Body.Close()
	back := res.Header.Get("Location")
	if !strings.HasPrefix(back, b.base+"/oidc/callback?") {
		b.t.Fatalf("provider: got %d to %q, want a redirect to the callback", res.StatusCode, back)
	}
	return b.get(strings.TrimPrefix(back, b.base))
}

// TestOIDCSignIn: single sign-on signs in the enabled operator with the
// provider's verified email, without a TOTP code though one is enrolled;
// an unverified email, an unknown one (no operator is created) and a
// disabled operator are refused, and so is an answer not begun here.
func TestOIDCSignIn(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e, m := newOIDCEnv(t, engine)
		e.operator(t, "Seo@example.com", herald.RoleOperator)
		b := e.browser(t)
		b.wantSignedIn("seo@example.com", "/")
		e.enrolTOTP(b)
		resp, body := e.browser(t).get("/login")
		wantIn(t, "sign-in page", body, `id="sign-in-oidc"`)

		b = e.browser(t)
		resp, body = b.oidcSignIn(&mockoidc.MockUser{Subject: "s1", Email: "seo@EXAMPLE.com", EmailVerified: true}, m)
		if resp.StatusCode != http.StatusOK || sessionCookieOf(resp) == nil || !strings.Contains(body, `url=/"`) {
			t.Fatalf("verified email of an operator: got %d, cookie %v, want 200 going on to / with a session:\n%s", resp.StatusCode, sessionCookieOf(resp), body)
		}
		resp, body = b.get("/account")
		wantStatus(t, resp, body, http.StatusOK)
		wantIn(t, "account page after single sign-on", body, `id="account-email">Seo@example.com<`)

		e.operator(t, "off@example.com", herald.RoleAdmin)
		o, _, _ := e.store.OperatorByEmail(context.Background(), "off@example.com")
		disabled := true
		if _, err := e.store.UpdateOperator(context.Background(), o.ID, identity.OperatorChange{Disabled: &disabled}); err != nil {
			t.Fatal(err)
		}
		before, _ := e.store.Operators(context.Background())
		for name, user := range map[string]*mockoidc.MockUser{
			"Unverified": {Subject: "s2", Email: "seo@example.com", EmailVerified: false},
			"Unknown":    {Subject: "s3", Email: "stranger@example.com", EmailVerified: true},
			"Disabled":   {Subject: "s4", Email: "off@example.com", EmailVerified: true},
		} {
			b := e.browser(t)
			resp, body := b.oidcSignIn(user, m)
			if resp.StatusCode != http.StatusUnauthorized || sessionCookieOf(resp) != nil {
				t.Errorf("%s: got %d, cookie %v, want 401 without a session:\n%s", name, resp.StatusCode, sessionCookieOf(resp), body)
			}
			if resp, _ := b.get("/"); resp.StatusCode != http.StatusSeeOther {
				t.Errorf("%s: a page afterwards: got %d, want 303 to /login", name, resp.StatusCode)
			}
		}
		if after, _ := e.store.Operators(context.Background()); len(after) != len(before) {
			t.Errorf("operators after refused sign-ins: got %d, want %d (none created)", len(after), len(before))
		}

		// A callback whose state is not the one this browser was given.
		b = e.browser(t)
		m.QueueUser(&mockoidc.MockUser{Subject: "s1", Email: "seo@example.com", EmailVerified: true})
		b.get("/oidc/login")
		if resp, _ := b.get("/oidc/callback?code=x&state=forged"); resp.StatusCode != http.StatusUnauthorized || sessionCookieOf(resp) != nil {
			t.Errorf("forged state: got %d, want 401 without a session", resp.StatusCode)
		}
	})
}

// TestOIDCOff: without an issuer the sign-in page has no single sign-on
// button and its routes are not found.
func TestOIDCOff(t *testing.T) {
	t.Parallel()
	e := newSignInEnv(t, testenv.SQLite)
	b := e.browser(t)
	if _, body := b.get("/login"); strings.Contains(body, "sign-in-oidc") {
		t.Errorf("sign-in page without an issuer: has the single sign-on button")
	}
	if resp, _ := b.get("/oidc/login"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /oidc/login without an issuer: got %d, want 404", resp.StatusCode)
	}
}
