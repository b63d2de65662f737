package admin_test

import (
	"fmt"
	"html"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/oauth2-proxy/mockoidc"
	"github.com/pquerna/otp/totp"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/admin"
	"github.com/heraldpush/herald/internal/testenv"
)

// TestSignInBrowser: in Chromium, an operator chooses a password on the
// setup link, signs in with it, enrols TOTP on the Account page, signs out,
// and signs in again with the password and a code.
func TestSignInBrowser(t *testing.T) {
	t.Parallel()
	ctx := headless(t, 45*time.Second)
	e := newSignInEnv(t, testenv.SQLite)
	_, token := e.addOperator(t, "baek@example.com", herald.RoleAdmin)
	base := e.admin.URL
	step(t, ctx, "choose a password on the setup link",
		chromedp.Navigate(base+"/setup?token="+token),
		chromedp.WaitVisible(chromedp.CSS("#password")),
		chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.SendKeys(chromedp.CSS("#confirm"), password),
		chromedp.Click(chromedp.CSS("#set-password")),
		chromedp.WaitVisible(chromedp.CSS("#notice")),
	)
	signIn := func(what string) {
		step(t, ctx, what,
			chromedp.WaitVisible(chromedp.CSS("#email")),
			chromedp.SendKeys(chromedp.CSS("#email"), "baek@example.com"),
			chromedp.SendKeys(chromedp.CSS("#password"), password),
			chromedp.Click(chromedp.CSS("#sign-in-password")),
		)
	}
	signIn("sign in with the password")
	step(t, ctx, "open the Account page and issue a secret",
		chromedp.WaitVisible(chromedp.CSS("#account")),
		chromedp.Click(chromedp.CSS("#account")),
		chromedp.WaitVisible(chromedp.CSS("#totp-new")),
		chromedp.Click(chromedp.CSS("#totp-new")),
		chromedp.WaitVisible(chromedp.CSS("#totp-secret")),
	)
	secret := text(t, ctx, "#totp-secret")
	if url := text(t, ctx, "#totp-url"); !strings.HasPrefix(url, "otpauth://totp/Herald:baek@example.com?") {
		t.Fatalf("otpauth URL: got %q", url)
	}
	code := func() string {
		c, err := totp.GenerateCode(secret, e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	step(t, ctx, "confirm with a code",
		chromedp.SendKeys(chromedp.CSS("#totp-code"), code()),
		chromedp.Click(chromedp.CSS("#totp-confirm")),
		chromedp.WaitVisible(chromedp.CSS("#notice")),
	)
	if got := text(t, ctx, "#account-totp"); got != "set up" {
		t.Fatalf("TOTP after confirming: got %q, want set up", got)
	}
	screenshot(t, ctx, "dashboard-account.png")
	step(t, ctx, "sign out", chromedp.Click(chromedp.CSS("#sign-out")))
	signIn("sign in again with the password")
	step(t, ctx, "give the code",
		chromedp.WaitVisible(chromedp.CSS("#code")),
		chromedp.SendKeys(chromedp.CSS("#code"), code()),
		chromedp.Click(chromedp.CSS("#sign-in-code")),
		// the apps page's own form: the code page being left shows
		// #account too, so waiting for it may end before the navigation
		chromedp.WaitVisible(chromedp.CSS("#new-app")),
	)
	if who := text(t, ctx, "#account"); who != "baek@example.com" {
		t.Errorf("signed in as: got %q, want baek@example.com", who)
	}
}

// TestOIDCBrowser: in Chromium, single sign-on from the sign-in page's
// button through a provider on another site (127.0.0.1 against the
// dashboard's localhost), approved by a click on the provider's page, ends
// signed in: the SameSite=Lax cookie of the flow comes back with the
// provider's redirect, and the Strict session cookie with the page that
// follows (which a redirect begun on the provider's site would not send).
func TestOIDCBrowser(t *testing.T) {
	t.Parallel()
	ctx := headless(t, 45*time.Second)
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	// The provider's own page: the person approves by a click there, so
	// the navigation back to the dashboard starts on the provider's site.
	m.AddMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != mockoidc.AuthorizationEndpoint || r.URL.Query().Get("approved") != "" {
				next.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><a id="approve" href="%s">Approve</a>`, html.EscapeString(r.URL.String()+"&approved=1"))
		})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown() })
	var base string
	e := newSignInEnv(t, testenv.SQLite, func(o *testenv.Options) {
		base = strings.Replace(o.Config.Admin.AdminURL, "127.0.0.1", "localhost", 1)
		o.Config.Admin.AdminURL = base
		o.Config.Admin.OIDC = admin.OIDCConfig{Issuer: m.Issuer(), ClientID: m.ClientID, ClientSecret: m.ClientSecret}
	})
	e.addOperator(t, "moon@example.com", herald.RoleViewer)
	m.QueueUser(&mockoidc.MockUser{Subject: "m1", Email: "moon@example.com", EmailVerified: true})
	step(t, ctx, "sign in with single sign-on",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS("#sign-in-oidc")),
		chromedp.Click(chromedp.CSS("#sign-in-oidc")),
		chromedp.WaitVisible(chromedp.CSS("#approve")),
		chromedp.Click(chromedp.CSS("#approve")),
		chromedp.WaitVisible(chromedp.CSS("#account")),
	)
	if who := text(t, ctx, "#account"); who != "moon@example.com" {
		t.Errorf("signed in as: got %q, want moon@example.com", who)
	}
}
