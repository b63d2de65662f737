package admin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/heraldpush/herald"
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
		recs, _, err := e.store.AccessRecords(context.Background(), herald.AccessFilter{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		var refusedRec *herald.AccessRecord
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
