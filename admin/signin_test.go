package admin_test

import (
	"context"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/admin"
	"github.com/heraldpush/herald/identity"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/server"
	"github.com/heraldpush/herald/sqlstore"
)

// signInEnv is a node (testenv) on either engine, on a clock the test
// sets (it starts at the real time, which single sign-on's tokens are
// dated by), trusting the proxy's headers, with River working no job.
type signInEnv struct {
	node *server.Server
	// db is the store's engine, dbURL its PostgreSQL URL ("" on SQLite).
	db    server.Engine
	dbURL string
	store *sqlstore.Store
	clock *dashClock
	admin testenv.Listener
	// opts are the node's options, for another node like it.
	opts testenv.Options
}

const password = "correct horse battery staple"

// onEngines runs f on SQLite, and on PostgreSQL when
// HERALD_TEST_DATABASE_URL is set.
func onEngines(t *testing.T, f func(t *testing.T, engine testenv.Engine)) {
	for _, engine := range []testenv.Engine{testenv.SQLite, testenv.Postgres} {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			f(t, engine)
		})
	}
}

func newSignInEnv(t *testing.T, engine testenv.Engine, tweak ...func(*testenv.Options)) *signInEnv {
	t.Helper()
	clock := &dashClock{t: time.Now().UTC().Truncate(time.Second)}
	// The admin listener is bound first: tweaks may read its URL, AdminURL.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := testenv.Options{Engine: engine, QuietLog: true, AdminListener: ln,
		Config:    server.Config{Admin: admin.Options{TrustProxy: true, AdminURL: "http://" + ln.Addr().String()}},
		Overrides: server.Overrides{Clock: clock.Now, IdleQueue: true}}
	for _, f := range tweak {
		f(&o)
	}
	env := testenv.New(t, o)
	o.AdminListener = nil
	return &signInEnv{node: env.Node, db: env.Node.DB, dbURL: env.DatabaseURL, store: env.Store, clock: clock, admin: env.Admin, opts: o}
}

func (e *signInEnv) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: e.admin.URL, hc: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// addOperator creates an operator with a setup link whose token it
// returns.
func (e *signInEnv) addOperator(t *testing.T, email string, role herald.Role) (herald.Operator, string) {
	t.Helper()
	o := herald.Operator{ID: herald.NewID("op_", e.clock.Now()), Email: email, Name: "Name of " + email, Role: role, CreatedAt: e.clock.Now()}
	token := "setup-" + email
	link := identity.SetupLink{OperatorID: o.ID, TokenHash: identity.TokenHash(token), Expires: e.clock.Now().Add(24 * time.Hour)}
	if err := e.store.CreateOperator(context.Background(), o, link); err != nil {
		t.Fatal(err)
	}
	return o, token
}

// operator creates an operator who has chosen the password through the
// setup page.
func (e *signInEnv) operator(t *testing.T, email string, role herald.Role) herald.Operator {
	t.Helper()
	o, token := e.addOperator(t, email, role)
	resp, body := e.browser(t).post("/setup", url.Values{"token": {token}, "password": {password}, "confirm": {password}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?setup=done" {
		t.Fatalf("setup of %s: got %d %q, want 303 to /login?setup=done:\n%s", email, resp.StatusCode, resp.Header.Get("Location"), body)
	}
	return o
}

// signIn posts an email and password from an address.
func (b *browser) signIn(email, pw, from string) (*http.Response, string) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.base+"/login", strings.NewReader(url.Values{"email": {email}, "password": {pw}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", from)
	return b.do(req)
}

// wantSignedIn signs in and wants to land on to.
func (b *browser) wantSignedIn(email, to string) {
	b.t.Helper()
	resp, body := b.signIn(email, password, "192.0.2.1")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != to {
		b.t.Fatalf("sign in as %s: got %d %q, want 303 to %s:\n%s", email, resp.StatusCode, resp.Header.Get("Location"), to, body)
	}
}

var problemText = regexp.MustCompile(`(?s)<div class="problem".*?</div>`)

// TestSetupPage: the link shows whose it is; a refused password does not
// use it up; a set password signs in; a used, replaced or expired link is
// 410 and an unknown one 404.
func TestSetupPage(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e := newSignInEnv(t, engine)
		b := e.browser(t)
		_, token := e.addOperator(t, "Kim@example.com", herald.RoleOperator)
		resp, body := b.get("/setup?token=" + token)
		wantStatus(t, resp, body, http.StatusOK)
		wantIn(t, "setup page", body, `id="setup-email">Kim@example.com<`)
		for name, form := range map[string]url.Values{
			"TooShort":   {"token": {token}, "password": {"short pass"}, "confirm": {"short pass"}},
			"Mismatched": {"token": {token}, "password": {password}, "confirm": {password + "!"}},
		} {
			resp, body := b.post("/setup", form)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `id="setup-form"`) {
				t.Errorf("%s: got %d, want 400 and the form again:\n%s", name, resp.StatusCode, body)
			}
		}
		resp, body = b.post("/setup", url.Values{"token": {token}, "password": {password}, "confirm": {password}})
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?setup=done" {
			t.Fatalf("setup after refusals: got %d %q, want 303 to /login?setup=done:\n%s", resp.StatusCode, resp.Header.Get("Location"), body)
		}
		_, body = b.get("/login?setup=done")
		wantIn(t, "sign-in page after setup", body, "Your password is set.")
		b.wantSignedIn("kim@EXAMPLE.com", "/")

		other := e.browser(t)
		for name, c := range map[string]struct {
			path string
			want int
		}{"Used": {"/setup?token=" + token, http.StatusGone}, "Unknown": {"/setup?token=nothing", http.StatusNotFound}} {
			if resp, body := other.get(c.path); resp.StatusCode != c.want {
				t.Errorf("%s link: got %d, want %d:\n%s", name, resp.StatusCode, c.want, body)
			}
		}
		resp, _ = other.post("/setup", url.Values{"token": {token}, "password": {"another password"}, "confirm": {"another password"}})
		if resp.StatusCode != http.StatusGone {
			t.Errorf("POST with a used link: got %d, want 410", resp.StatusCode)
		}

		o, old := e.addOperator(t, "lee@example.com", herald.RoleViewer)
		if err := e.store.ReplaceSetupLink(context.Background(), identity.SetupLink{OperatorID: o.ID, TokenHash: identity.TokenHash("new"), Expires: e.clock.Now().Add(24 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if resp, _ := other.get("/setup?token=" + old); resp.StatusCode != http.StatusGone {
			t.Errorf("replaced link: got %d, want 410", resp.StatusCode)
		}
		e.clock.Set(e.clock.Now().Add(24*time.Hour + time.Second))
		if resp, _ := other.get("/setup?token=new"); resp.StatusCode != http.StatusGone {
			t.Errorf("expired link: got %d, want 410", resp.StatusCode)
		}
	})
}

// TestPasswordSignIn: the right password signs the operator in as
// themself; a wrong password, an unknown email, an operator without a
// password and a disabled one get the same answer.
func TestPasswordSignIn(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e := newSignInEnv(t, engine)
		park := e.operator(t, "park@example.com", herald.RoleViewer)
		e.operator(t, "off@example.com", herald.RoleAdmin)
		e.addOperator(t, "new@example.com", herald.RoleAdmin)
		off := "off@example.com"
		o, _, err := e.store.OperatorByEmail(context.Background(), off)
		disabled := true
		if _, err2 := e.store.UpdateOperator(context.Background(), o.ID, identity.OperatorChange{Disabled: &disabled}); err != nil || err2 != nil {
			t.Fatal(err, err2)
		}

		b := e.browser(t)
		b.wantSignedIn("park@example.com", "/")
		_, body := b.get("/")
		wantIn(t, "apps page", body, `id="account">park@example.com<`)
		resp, body := b.get("/account")
		wantStatus(t, resp, body, http.StatusOK)
		wantIn(t, "account page", body, `id="account-email">park@example.com<`, `id="account-role">viewer<`)
		if got, _ := e.store.Operator(context.Background(), park.ID); got.LastSeenAt.IsZero() {
			t.Errorf("operator after signing in: last seen zero, want set")
		}

		var first string
		for _, c := range []struct{ name, email, password string }{
			{"WrongPassword", "park@example.com", password + "x"},
			{"UnknownEmail", "nobody@example.com", password},
			{"NoPasswordYet", "new@example.com", password},
			{"Disabled", off, password},
		} {
			b := e.browser(t)
			resp, body := b.signIn(c.email, c.password, "192.0.2.2")
			problem := problemText.FindString(body)
			if resp.StatusCode != http.StatusUnauthorized || sessionCookieOf(resp) != nil || !strings.Contains(problem, "Wrong email or password.") {
				t.Errorf("%s: got %d, cookie %v, problem %q, want 401 without a session", c.name, resp.StatusCode, sessionCookieOf(resp), problem)
			}
			if first == "" {
				first = problem
			} else if problem != first {
				t.Errorf("%s: got problem %q, want the same as a wrong password's %q", c.name, problem, first)
			}
		}
	})
}

var totpSecret = regexp.MustCompile(`id="totp-secret">([A-Z2-7]+)<`)

// enrolTOTP enrols TOTP on the Account page and returns the secret.
func (e *signInEnv) enrolTOTP(b *browser) string {
	b.t.Helper()
	resp, body := b.post("/account/totp", url.Values{"csrf": {b.csrf("/account")}})
	m := totpSecret.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil || !strings.Contains(body, "otpauth://totp/Herald:") {
		b.t.Fatalf("issue a TOTP secret: got %d without a secret and otpauth URL:\n%s", resp.StatusCode, body)
	}
	resp, body = b.post("/account/totp/confirm", url.Values{"csrf": {b.csrf("/account")}, "code": {"000000"}})
	if resp.StatusCode != http.StatusBadRequest {
		b.t.Errorf("confirm with a wrong code: got %d, want 400:\n%s", resp.StatusCode, body)
	}
	if to := b.submit("/account", "/account/totp/confirm", url.Values{"code": {e.code(b.t, m[1], 0)}}); to != "/account" {
		b.t.Fatalf("confirm: got redirect to %q, want /account", to)
	}
	_, body = b.get("/account")
	wantIn(b.t, "account page after enrolling", body, `id="account-totp">set up<`)
	return m[1]
}

// code is the TOTP code of secret steps 30-second steps from now.
func (e *signInEnv) code(t *testing.T, secret string, steps int) string {
	t.Helper()
	c, err := totp.GenerateCode(secret, e.clock.Now().Add(time.Duration(steps)*30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// totpSignIn posts a code on the code page.
func (b *browser) totpSignIn(code string) (*http.Response, string) {
	b.t.Helper()
	return b.post("/login/totp", url.Values{"csrf": {b.csrf("/login/totp")}, "code": {code}})
}

// TestTOTPSignIn: once enrolled, the password opens only the code page;
// the code of now, or one step either side, signs in, once; codes further
// off are refused and count as failed sign-ins of the email.
func TestTOTPSignIn(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e := newSignInEnv(t, engine)
		e.operator(t, "choi@example.com", herald.RoleOperator)
		b := e.browser(t)
		b.wantSignedIn("choi@example.com", "/")
		secret := e.enrolTOTP(b)
		b.submit("/account", "/logout", url.Values{})

		b.wantSignedIn("choi@example.com", "/login/totp")
		if resp, _ := b.get("/"); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
			t.Errorf("a page before the code: got %d %q, want 303 to /login", resp.StatusCode, resp.Header.Get("Location"))
		}
		for _, steps := range []int{-3, 2} {
			if resp, body := b.totpSignIn(e.code(t, secret, steps)); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("code %d steps off: got %d, want 401:\n%s", steps, resp.StatusCode, body)
			}
		}
		for _, steps := range []int{-1, 0, 1} {
			b := e.browser(t)
			b.wantSignedIn("choi@example.com", "/login/totp")
			resp, body := b.totpSignIn(e.code(t, secret, steps))
			if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
				t.Fatalf("code %d steps off: got %d %q, want 303 to /:\n%s", steps, resp.StatusCode, resp.Header.Get("Location"), body)
			}
			if resp, body := b.get("/"); resp.StatusCode != http.StatusOK {
				t.Errorf("a page after the code: got %d:\n%s", resp.StatusCode, body)
			}
		}

		// A code signs in once (RFC 6238, 5.2): on another browser too.
		again := e.browser(t)
		again.wantSignedIn("choi@example.com", "/login/totp")
		if resp, body := again.totpSignIn(e.code(t, secret, 0)); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a code used already: got %d, want 401:\n%s", resp.StatusCode, body)
		}

		// 3 failures so far: 17 more make 20 failures of the email, which
		// refuse the code of the next step, unused.
		for range 17 {
			if resp, _ := b.totpSignIn("123456"); resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("wrong code: got %d, want 401", resp.StatusCode)
			}
		}
		e.clock.Set(e.clock.Now().Add(60 * time.Second))
		if resp, _ := b.totpSignIn(e.code(t, secret, 0)); resp.StatusCode != http.StatusTooManyRequests {
			t.Errorf("the right code after 20 wrong ones: got %d, want 429", resp.StatusCode)
		}
		if resp, _ := e.browser(t).signIn("choi@example.com", password, "192.0.2.99"); resp.StatusCode != http.StatusTooManyRequests {
			t.Errorf("the password from another address after 20 wrong codes: got %d, want 429", resp.StatusCode)
		}
	})
}

// TestSignInThrottle: 20 failures for one email (known or not, from any
// addresses) or from one address (for any emails) within 15 minutes, then
// 429 with Retry-After for that email or address, the right password too;
// the owner's token from that address still signs in, and the limit
// lifts as the failures age.
func TestSignInThrottle(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e := newSignInEnv(t, engine)
		e.operator(t, "han@example.com", herald.RoleOperator)
		e.operator(t, "yoon@example.com", herald.RoleOperator)
		b := e.browser(t)
		start := e.clock.Now()
		for i := range 20 {
			e.clock.Set(start.Add(time.Duration(i) * time.Second))
			if resp, _ := b.signIn("han@example.com", "guess", "198.51.100."+strconv.Itoa(i+1)); resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("failure %d: got %d, want 401", i+1, resp.StatusCode)
			}
			if resp, _ := b.signIn("ghost@example.com", "guess", "203.0.113.7"); resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("unknown email, failure %d: got %d, want 401", i+1, resp.StatusCode)
			}
		}
		resp, body := b.signIn("HAN@example.com", password, "192.0.2.50")
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "881" || sessionCookieOf(resp) != nil {
			t.Errorf("right password after 20 failures of the email: got %d, Retry-After %q, want 429, 881:\n%s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
		if resp, _ := b.signIn("ghost@example.com", password, "192.0.2.51"); resp.StatusCode != http.StatusTooManyRequests {
			t.Errorf("unknown email after 20 failures: got %d, want 429", resp.StatusCode)
		}
		// The count is the database's: another node refuses the email too.
		other := newSignInEnvOn(t, e, testenv.AdminToken)
		if resp, _ := other.browser(t).signIn("han@example.com", password, "192.0.2.54"); resp.StatusCode != http.StatusTooManyRequests {
			t.Errorf("right password on another node after 20 failures on this one: got %d, want 429", resp.StatusCode)
		}
		// 203.0.113.7 failed 20 times too: every email from it waits.
		if resp, _ := b.signIn("yoon@example.com", password, "203.0.113.7"); resp.StatusCode != http.StatusTooManyRequests {
			t.Errorf("another email from the throttled address: got %d, want 429", resp.StatusCode)
		}
		if resp, _ := b.signIn("yoon@example.com", password, "192.0.2.52"); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("another email from another address: got %d, want 303", resp.StatusCode)
		}
		if resp := e.browser(t).loginFrom(testenv.AdminToken, map[string]string{"X-Forwarded-For": "203.0.113.7"}); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("the owner's token from the throttled address: got %d, want 303", resp.StatusCode)
		}
		e.clock.Set(start.Add(15 * time.Minute))
		if resp, _ := e.browser(t).signIn("han@example.com", password, "192.0.2.53"); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("after the oldest failure aged out: got %d, want 303", resp.StatusCode)
		}
	})
}

// TestOperatorSessionLimits: an operator's session ends 30 minutes after
// it was last seen and 12 hours after it began; signing out ends it on
// every node; and it does not depend on the admin token, unlike the
// owner's.
func TestOperatorSessionLimits(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e := newSignInEnv(t, engine)
		e.operator(t, "jung@example.com", herald.RoleViewer)
		pageAfter := func(b *browser, d time.Duration) int {
			e.clock.Set(e.clock.Now().Add(d))
			resp, _ := b.get("/")
			return resp.StatusCode
		}
		idle := e.browser(t)
		idle.wantSignedIn("jung@example.com", "/")
		if got := pageAfter(idle, 29*time.Minute); got != http.StatusOK {
			t.Errorf("29 minutes idle: got %d, want 200", got)
		}
		if got := pageAfter(idle, 30*time.Minute); got != http.StatusSeeOther {
			t.Errorf("30 minutes idle: got %d, want 303 to /login", got)
		}

		busy := e.browser(t)
		busy.wantSignedIn("jung@example.com", "/")
		for i := range 24 { // 24 × 29 minutes = 11 h 36 min
			if got := pageAfter(busy, 29*time.Minute); got != http.StatusOK {
				t.Fatalf("page %d, %v after signing in: got %d, want 200", i+1, time.Duration(i+1)*29*time.Minute, got)
			}
		}
		if got := pageAfter(busy, 24*time.Minute); got != http.StatusSeeOther {
			t.Errorf("12 hours after signing in: got %d, want 303 to /login", got)
		}

		// Another node on the same store with another admin token.
		other := newSignInEnvOn(t, e, testenv.AdminToken+"rotated")
		op, owner := e.browser(t), e.browser(t)
		op.wantSignedIn("jung@example.com", "/")
		owner.login()
		u, _ := url.Parse(e.admin.URL)
		opCookies, ownerCookies := op.hc.Jar.Cookies(u), owner.hc.Jar.Cookies(u)
		onOther := func(cookies []*http.Cookie) *browser {
			b := other.browser(t)
			o, _ := url.Parse(other.admin.URL)
			b.hc.Jar.SetCookies(o, cookies)
			return b
		}
		if resp, _ := onOther(opCookies).get("/"); resp.StatusCode != http.StatusOK {
			t.Errorf("operator's session with the admin token changed: got %d, want 200", resp.StatusCode)
		}
		if resp, _ := onOther(ownerCookies).get("/"); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("owner's session with the admin token changed: got %d, want 303 to /login", resp.StatusCode)
		}
		onOther(opCookies).submit("/", "/logout", url.Values{})
		if resp, _ := op.get("/"); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("operator's session signed out on the other node: got %d, want 303 to /login", resp.StatusCode)
		}
	})
}

// newSignInEnvOn is a second admin listener (another node's) on e's
// node, store and clock, with adminToken as its token.
func newSignInEnvOn(t *testing.T, e *signInEnv, adminToken string) *signInEnv {
	_, h := e.node.Handlers(e.opts.Config, adminToken)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &signInEnv{node: e.node, db: e.db, dbURL: e.dbURL, store: e.store, clock: e.clock, admin: testenv.Listener{URL: srv.URL}, opts: e.opts}
}

// TestRequireTOTP: with HERALD_REQUIRE_TOTP an admin without TOTP lands on
// the Account page, and every other page sends them back there until they
// enrol; operators of other roles and the owner are not asked.
func TestRequireTOTP(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e := newSignInEnv(t, engine, func(o *testenv.Options) { o.Config.Admin.RequireTOTP = true })
		e.operator(t, "admin@example.com", herald.RoleAdmin)
		e.operator(t, "viewer@example.com", herald.RoleViewer)
		b := e.browser(t)
		b.wantSignedIn("admin@example.com", "/account")
		for _, path := range []string{"/", "/apps/app_x/users"} {
			if resp, _ := b.get(path); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/account" {
				t.Errorf("GET %s before enrolling: got %d %q, want 303 to /account", path, resp.StatusCode, resp.Header.Get("Location"))
			}
		}
		_, body := b.get("/account")
		wantIn(t, "account page", body, `id="must-enrol"`)
		e.enrolTOTP(b)
		if resp, body := b.get("/"); resp.StatusCode != http.StatusOK {
			t.Errorf("GET / after enrolling: got %d:\n%s", resp.StatusCode, body)
		}
		e.browser(t).wantSignedIn("viewer@example.com", "/")
		owner := e.browser(t)
		owner.login()
		if resp, _ := owner.get("/"); resp.StatusCode != http.StatusOK {
			t.Errorf("owner: got %d, want 200", resp.StatusCode)
		}
	})
}

// TestMyTOTPOwner: the owner's token has no account to enrol TOTP on.
func TestMyTOTPOwner(t *testing.T) {
	t.Parallel()
	e := newSignInEnv(t, testenv.SQLite)
	for _, path := range []string{"/admin/v1/me/totp", "/admin/v1/me/totp/confirm"} {
		res := testenv.Send(t, http.DefaultClient, e.admin.URL, testenv.Request{Method: http.MethodPost, URL: e.admin.URL + path,
			Header: map[string]string{"Authorization": "Bearer " + testenv.AdminToken}, Body: map[string]string{"code": "123456"}})
		if res.Status != http.StatusForbidden || !strings.Contains(string(res.Body), herald.ErrForbidden.Code) {
			t.Errorf("POST %s as the owner: got %d %s, want 403 %s", path, res.Status, res.Body, herald.ErrForbidden.Code)
		}
	}
	owner := e.browser(t)
	owner.login()
	if resp, _ := owner.get("/account"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("account page as the owner: got %d, want 403", resp.StatusCode)
	}
	if _, body := owner.get("/"); strings.Contains(body, `id="account"`) {
		t.Errorf("the owner's pages link to an account page")
	}
}
