package admin

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/identity"
	"github.com/heraldpush/herald/sqlite"
)

// TestSignInNotes: every sign-in outcome tells the access record who
// signed in, or the email typed with no one: the owner's token, a
// password, a TOTP code and single sign-on, right and wrong.
func TestSignInNotes(t *testing.T) {
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
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return now }
	mk, _ := herald.ParseMasterKey(herald.NewMasterKeyText())
	d := newDashboard(newServer(Config{Store: db, MasterKey: mk, Token: "owner-token-0123456789", Now: db.Now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Options: Options{OIDC: OIDCConfig{Issuer: "http://127.0.0.1:9", ClientID: "c"}}}))

	op := herald.Operator{ID: "op_1", Email: "Ahn@example.com", Name: "Ahn", Role: herald.RoleOperator, CreatedAt: now}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.CreateOperator(ctx, op, identity.SetupLink{OperatorID: op.ID, TokenHash: "h", Expires: now.Add(time.Hour)}))
	_, err = db.UseSetupLink(ctx, "h", d.hasher.Hash("right password 1"))
	must(err)
	const secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
	must(db.SetPendingTOTP(ctx, op.ID, mk.Seal([]byte(secret))))
	must(db.ConfirmTOTP(ctx, op.ID))

	send := func(h http.HandlerFunc, method, path string, form url.Values, cookie *http.Cookie) (*access.Note, *http.Response) {
		r := httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if cookie != nil {
			r.AddCookie(cookie)
		}
		r, n := access.With(r)
		w := httptest.NewRecorder()
		h(w, r)
		return n, w.Result()
	}
	want := func(name string, n *access.Note, email, operatorID string) {
		t.Helper()
		if gotEmail, gotID, ok := n.SignedIn(); !ok || gotEmail != email || gotID != operatorID {
			t.Errorf("%s: got note signedIn %v, email %q, operator %q, want a sign-in with %q, %q", name, ok, gotEmail, gotID, email, operatorID)
		}
	}

	n, _ := send(d.login, http.MethodPost, "/login", url.Values{"token": {"wrong"}}, nil)
	want("wrong token", n, "", "")
	n, _ = send(d.login, http.MethodPost, "/login", url.Values{"token": {"owner-token-0123456789"}}, nil)
	want("owner's token", n, "", herald.OwnerID)
	n, _ = send(d.login, http.MethodPost, "/login", url.Values{"email": {"nobody@example.com"}, "password": {"right password 1"}}, nil)
	want("unknown email", n, "nobody@example.com", "")
	n, _ = send(d.login, http.MethodPost, "/login", url.Values{"email": {"ahn@example.com"}, "password": {"wrong password"}}, nil)
	want("wrong password", n, "ahn@example.com", "")
	n, resp := send(d.login, http.MethodPost, "/login", url.Values{"email": {"ahn@example.com"}, "password": {"right password 1"}}, nil)
	want("right password", n, "ahn@example.com", op.ID)

	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatal("no session cookie after the password")
	}
	csrf := identity.CSRFToken(cookie.Value)
	n, _ = send(d.totpLogin, http.MethodPost, "/login/totp", url.Values{"csrf": {csrf}, "code": {"000000"}}, cookie)
	want("wrong code", n, "Ahn@example.com", "")
	code, _ := totp.GenerateCode(secret, now)
	n, resp = send(d.totpLogin, http.MethodPost, "/login/totp", url.Values{"csrf": {csrf}, "code": {code}}, cookie)
	want("right code", n, "Ahn@example.com", op.ID)
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("right code: got %d, want 303", resp.StatusCode)
	}

	n, _ = send(d.oidcCallback, http.MethodGet, "/oidc/callback?code=x&state=y", nil, nil)
	want("single sign-on not begun here", n, "", "")
}
