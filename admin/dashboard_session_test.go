package admin_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"
)

// TestDashboardLogoutEndsSession: after signing out, a copy of the old
// session cookie is refused.
func TestDashboardLogoutEndsSession(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	u, _ := url.Parse(e.admin.URL)
	old := b.hc.Jar.Cookies(u)
	if resp, body := b.get("/"); resp.StatusCode != http.StatusOK {
		t.Fatalf("signed in: got %d, want 200:\n%s", resp.StatusCode, body)
	}
	b.submit("/", "/logout", url.Values{})

	replay := e.browser(t)
	replay.hc.Jar.SetCookies(u, old)
	resp, _ := replay.get("/")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
		t.Errorf("the old cookie after sign-out: got %d %q, want 303 to /login", resp.StatusCode, resp.Header.Get("Location"))
	}
	// Another session is not affected by this one's end.
	other := e.browser(t)
	other.login()
	if resp, _ := other.get("/"); resp.StatusCode != http.StatusOK {
		t.Errorf("a new session: got %d, want 200", resp.StatusCode)
	}
}

// loginFrom posts the sign-in form with headers a proxy would add.
func (b *browser) loginFrom(token string, header map[string]string) *http.Response {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.base+"/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, _ := b.do(req)
	return resp
}

func sessionCookieOf(resp *http.Response) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == "herald_session" {
			return c
		}
	}
	return nil
}

// TestDashboardSecureCookie: the session cookie is Secure when the
// dashboard is reached over HTTPS through a proxy that says so, and only
// when the proxy is trusted.
func TestDashboardSecureCookie(t *testing.T) {
	t.Parallel()
	https := map[string]string{"X-Forwarded-Proto": "https"}
	plain := newDashEnv(t)
	if c := sessionCookieOf(plain.browser(t).loginFrom(testenv.AdminToken, https)); c == nil || c.Secure {
		t.Errorf("untrusted proxy header: got %+v, want a session cookie without Secure", c)
	}
	proxied := newDashEnv(t, func(o *testenv.Options) { o.Config.Admin.TrustProxy = true })
	if c := sessionCookieOf(proxied.browser(t).loginFrom(testenv.AdminToken, https)); c == nil || !c.Secure {
		t.Errorf("trusted proxy, https: got %+v, want a Secure session cookie", c)
	}
	if c := sessionCookieOf(proxied.browser(t).loginFrom(testenv.AdminToken, map[string]string{"X-Forwarded-Proto": "http"})); c == nil || c.Secure {
		t.Errorf("trusted proxy, http: got %+v, want no Secure", c)
	}
}

// TestDashboardSignInThrottle: twenty failed tokens from one address are
// answered 401, then every token from it 429 (the right one too) until the
// oldest failure is 15 minutes old; other addresses are not affected.
func TestDashboardSignInThrottle(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t, func(o *testenv.Options) { o.Config.Admin.TrustProxy = true })
	from := func(ip string) map[string]string { return map[string]string{"X-Forwarded-For": "203.0.113.9, " + ip} }
	b := e.browser(t)
	start := e.clock.Now()
	for i := range 20 {
		e.clock.Set(start.Add(time.Duration(i) * time.Second))
		if resp := b.loginFrom("wrong", from("198.51.100.7")); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("failure %d: got %d, want 401", i+1, resp.StatusCode)
		}
	}
	resp := b.loginFrom(testenv.AdminToken, from("198.51.100.7"))
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "881" || sessionCookieOf(resp) != nil {
		t.Fatalf("right token after 20 failures: got %d, Retry-After %q, want 429 with Retry-After 881 and no session", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if resp := b.loginFrom(testenv.AdminToken, from("198.51.100.8")); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("another address: got %d, want 303 (signed in)", resp.StatusCode)
	}
	e.clock.Set(start.Add(15 * time.Minute))
	if resp := b.loginFrom(testenv.AdminToken, from("198.51.100.7")); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after the wait: got %d, want 303 (signed in)", resp.StatusCode)
	}
}
