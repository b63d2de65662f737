package admin_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/server"
	"github.com/heraldpush/herald/sqlite"
)

// dashClock is a clock the test sets.
type dashClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *dashClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *dashClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// dashEnv is a node (testenv) on one real SQLite database, on a clock the
// test sets. River works no job (server.Overrides.IdleQueue), so
// scheduled pushes stay scheduled.
type dashEnv struct {
	db     *sqlite.DB
	clock  *dashClock
	admin  testenv.Listener
	public testenv.Listener
}

var seoul = func() *time.Location {
	loc, err := time.LoadLocation("Asia/Seoul")
	if err != nil {
		panic(err)
	}
	return loc
}()

func newDashEnv(t *testing.T, tweak ...func(*testenv.Options)) *dashEnv {
	t.Helper()
	clock := &dashClock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, seoul)}
	o := testenv.Options{QuietLog: true, Overrides: server.Overrides{Clock: clock.Now, IdleQueue: true}}
	for _, f := range tweak {
		f(&o)
	}
	env := testenv.New(t, o)
	return &dashEnv{db: env.DB, clock: clock, admin: env.Admin, public: env.API}
}

// browser is an HTTP client with a cookie jar that does not follow
// redirects, so each answer can be checked.
type browser struct {
	t    *testing.T
	base string
	hc   *http.Client
	// relogin signs in again when a page answers with the sign-in page
	// after login: tests move the clock hours on, past a session's idle
	// limit, where a person would sign in again.
	relogin bool
}

func (e *dashEnv) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: e.admin.URL, hc: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// with returns the browser, sharing its cookies, for subtest t.
func (b *browser) with(t *testing.T) *browser {
	c := *b
	c.t = t
	return &c
}

func (b *browser) do(req *http.Request) (*http.Response, string) {
	b.t.Helper()
	if req.URL.Path == "/logout" {
		b.relogin = false
	}
	resp, body := b.send(req)
	if b.relogin && resp.StatusCode == http.StatusSeeOther && resp.Header.Get("Location") == "/login" {
		b.login()
		again := req.Clone(req.Context())
		again.Header.Del("Cookie") // the client wrote the old session's into req
		if req.GetBody != nil {
			again.Body, _ = req.GetBody()
		}
		resp, body = b.send(again)
	}
	return resp, body
}

func (b *browser) send(req *http.Request) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func (b *browser) get(path string) (*http.Response, string) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.base+path, nil)
	return b.do(req)
}

func (b *browser) post(path string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the form token from a page.
func (b *browser) csrf(path string) string {
	b.t.Helper()
	resp, body := b.get(path)
	m := csrfField.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		b.t.Fatalf("GET %s: got %d without a csrf field, want 200 with one:\n%s", path, resp.StatusCode, body)
	}
	return m[1]
}

// submit posts a form of page from with its CSRF token and wants a 303.
func (b *browser) submit(from, action string, form url.Values) string {
	b.t.Helper()
	form.Set("csrf", b.csrf(from))
	resp, body := b.post(action, form)
	if resp.StatusCode != http.StatusSeeOther {
		b.t.Fatalf("POST %s: got %d, want 303:\n%s", action, resp.StatusCode, body)
	}
	return resp.Header.Get("Location")
}

func (b *browser) login() {
	b.t.Helper()
	resp, body := b.post("/login", url.Values{"token": {testenv.AdminToken}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		b.t.Fatalf("login: got %d %s, want 303 to /:\n%s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	b.relogin = true
}

func wantStatus(t *testing.T, resp *http.Response, body string, want int) {
	t.Helper()
	if resp.StatusCode != want {
		t.Fatalf("%s %s: got %d, want %d:\n%s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, want, body)
	}
}

func TestDashboardLogin(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	t.Run("ErrWrongToken", func(t *testing.T) {
		b := e.browser(t)
		resp, body := b.post("/login", url.Values{"token": {testenv.AdminToken + "x"}})
		wantStatus(t, resp, body, http.StatusUnauthorized)
		if !strings.Contains(body, "That is not the admin token.") || len(resp.Cookies()) != 0 {
			t.Errorf("got cookies %v and page %s, want the error and no cookie", resp.Cookies(), body)
		}
	})
	t.Run("OK", func(t *testing.T) {
		b := e.browser(t)
		resp, body := b.post("/login", url.Values{"token": {testenv.AdminToken}})
		wantStatus(t, resp, body, http.StatusSeeOther)
		cookies := resp.Cookies()
		if len(cookies) != 1 {
			t.Fatalf("got cookies %v, want one session cookie", cookies)
		}
		c := cookies[0]
		if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || strings.Contains(c.Value, testenv.AdminToken) {
			t.Errorf("session cookie: got %+v, want HttpOnly, SameSite=Strict, Path=/, without the token", c)
		}
		resp, body = b.get("/")
		wantStatus(t, resp, body, http.StatusOK)
		if !strings.Contains(body, "New app") {
			t.Errorf("apps page: got %s, want the create form", body)
		}
		resp, _ = b.get("/login")
		if resp.StatusCode != http.StatusSeeOther {
			t.Errorf("login page when signed in: got %d, want 303 to /", resp.StatusCode)
		}
	})
	t.Run("Logout", func(t *testing.T) {
		b := e.browser(t)
		b.login()
		if to := b.submit("/", "/logout", url.Values{}); to != "/login" {
			t.Fatalf("logout: got redirect to %q, want /login", to)
		}
		if resp, _ := b.get("/"); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("after logout: got %d, want 303 to /login", resp.StatusCode)
		}
	})
}

func TestDashboardNeedsSession(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	for _, path := range []string{"/", "/apps/app_x", "/apps/app_x/pushes", "/apps/app_x/scheduled", "/apps/app_x/usage", "/apps/app_x/users"} {
		resp, body := b.get(path)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
			t.Errorf("GET %s: got %d %q, want 303 to /login:\n%s", path, resp.StatusCode, resp.Header.Get("Location"), body)
		}
	}
	// A forged session cookie is no session.
	u, _ := url.Parse(e.admin.URL)
	b.hc.Jar.SetCookies(u, []*http.Cookie{{Name: "herald_session", Value: "abc.99999999999.def"}})
	if resp, _ := b.get("/"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("forged cookie: got %d, want 303 to /login", resp.StatusCode)
	}
	// The JSON API keeps its bearer auth and its error bodies.
	if resp, body := b.get("/admin/v1/apps"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, herald.ErrUnauthorized.Code) {
		t.Errorf("JSON API without bearer: got %d %s, want 401 %s", resp.StatusCode, body, herald.ErrUnauthorized.Code)
	}
	if resp, body := b.get("/nothing"); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, herald.ErrRouteNotFound.Code) {
		t.Errorf("unknown path: got %d %s, want the JSON 404", resp.StatusCode, body)
	}
}

func TestDashboardCSRF(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	other := e.browser(t)
	other.login()
	otherToken := other.csrf("/")
	b := e.browser(t)
	b.login()
	for name, token := range map[string]string{"ErrMissing": "", "ErrWrong": "x", "ErrOtherSession": otherToken} {
		t.Run(name, func(t *testing.T) {
			b := b.with(t)
			form := url.Values{"name": {"forged"}, "tier": {"free"}, "timeZone": {"Asia/Seoul"}}
			if token != "" {
				form.Set("csrf", token)
			}
			resp, body := b.post("/apps", form)
			wantStatus(t, resp, body, http.StatusForbidden)
		})
	}
	if apps, err := e.db.ListApps(context.Background()); err != nil || len(apps) != 0 {
		t.Fatalf("apps after refused posts: got %d %v, want none", len(apps), err)
	}
}

var secretShown = regexp.MustCompile(`id="shown-secret">(hs_[0-9A-Za-z]{40})<`)

func TestDashboardCreateApp(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	t.Run("ErrInvalid", func(t *testing.T) {
		b := b.with(t)
		form := url.Values{"name": {"Bad zone"}, "tier": {"free"}, "timeZone": {"Mars/Olympus"}, "csrf": {b.csrf("/")}}
		resp, body := b.post("/apps", form)
		wantStatus(t, resp, body, http.StatusBadRequest)
		if !strings.Contains(body, "<code>timeZone</code> must be an IANA time zone name") || !strings.Contains(body, `value="Bad zone"`) {
			t.Errorf("got %s, want the timeZone problem and the form kept", body)
		}
	})
	name := `Shop <script>alert(1)</script>`
	to := b.submit("/", "/apps", url.Values{"name": {name}, "tier": {"business"}, "appUserEnabled": {"false", "true"}, "timeZone": {"America/New_York"}})
	if !strings.HasPrefix(to, "/apps/app_") {
		t.Fatalf("create: got redirect to %q, want the app page", to)
	}
	appID := strings.TrimPrefix(to, "/apps/")
	resp, body := b.get(to)
	wantStatus(t, resp, body, http.StatusOK)
	m := secretShown.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("app page right after create: got %s, want the secret key shown", body)
	}
	a, err := e.db.App(context.Background(), appID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != name || a.Tier != herald.TierBusiness || !a.AppUserEnabled || !a.Registered || a.TimeZone != "America/New_York" || !herald.SecretMatches(a.SecretHash, m[1]) {
		t.Errorf("stored app: got %+v, want the form's settings and the shown secret", a)
	}
	if !strings.Contains(body, a.APIKey) {
		t.Errorf("app page: want the API key %s", a.APIKey)
	}
	if _, body := b.get(to); strings.Contains(body, m[1]) || strings.Contains(body, "shown-secret") {
		t.Errorf("app page reloaded: got the secret again, want it shown only once")
	}
	_, body = b.get("/")
	if !strings.Contains(body, `Shop &lt;script&gt;alert(1)&lt;/script&gt;`) || strings.Contains(body, "<script>") || !strings.Contains(body, appID) {
		t.Errorf("apps list: got %s, want the new app listed with its name escaped", body)
	}
}

// withScheduledApp creates an app through the forms, with FCM credentials
// pasted in, and schedules two pushes for 14:00 through the public API.
func withScheduledApp(t *testing.T, e *dashEnv, b *browser) (appPath, first, second string) {
	t.Helper()
	appPath = b.submit("/", "/apps", url.Values{"name": {"Scheduler"}, "tier": {"free"}, "timeZone": {"Asia/Seoul"}})
	_, body := b.get(appPath)
	secret := secretShown.FindStringSubmatch(body)[1]
	a, _ := e.db.App(context.Background(), strings.TrimPrefix(appPath, "/apps/"))
	b.submit(appPath, appPath+"/fcm-credentials", url.Values{"serviceAccount": {string(testenv.NewServiceAccount(t).JSON)}})
	if _, body := b.get(appPath); !strings.Contains(body, "FCM credentials saved.") || !strings.Contains(body, "A service-account file is stored") ||
		!strings.Contains(body, `id="fcm-uploaded"`) {
		t.Fatalf("after upload: got %s, want the credentials stored", body)
	}
	c := client.New(e.public.URL, a.APIKey, secret, nil)
	schedule := func(title string) string {
		res, err := c.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1"}, Title: title, Content: "c",
			Options: &client.Options{ScheduleTime: "2026-12-01T14:00"}})
		if err != nil {
			t.Fatal(err)
		}
		return res.PushID
	}
	first = schedule("First")
	e.clock.Set(e.clock.Now().Add(time.Second)) // the second push is the newer one
	return appPath, first, schedule("Second")
}

func TestDashboardScheduledPush(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	appPath, edited, cancelled := withScheduledApp(t, e, b)
	list := appPath + "/scheduled"
	_, body := b.get(list)
	if !strings.Contains(body, "cancel-"+edited) || !strings.Contains(body, "cancel-"+cancelled) || !strings.Contains(body, "2026-12-01 14:00:00 KST") {
		t.Fatalf("scheduled list: got %s, want both pushes at 14:00 KST", body)
	}

	t.Run("Edit", func(t *testing.T) {
		b := b.with(t)
		editPath := list + "/" + edited
		form := url.Values{"title": {"Edited"}, "content": {"c"}, "scheduleTime": {"2026-12-01T14:00"}}
		b.submit(editPath, editPath, form)
		p, err := e.db.Push(context.Background(), edited)
		if err != nil || p.Content.Title != "Edited" || len(p.Edits) != 1 || p.Edits[0].Changes["title"] != "Edited" || len(p.Edits[0].Changes) != 1 {
			t.Fatalf("edited push: got %+v %v, want the new title and one edit of it in the trail", p, err)
		}
	})
	t.Run("NothingChanged", func(t *testing.T) {
		b := b.with(t)
		editPath := list + "/" + edited
		b.submit(editPath, editPath, url.Values{"title": {"Edited"}, "content": {"c"}, "scheduleTime": {"2026-12-01T14:00"}})
		if p, _ := e.db.Push(context.Background(), edited); len(p.Edits) != 1 {
			t.Errorf("trail after an unchanged form: got %d edits, want 1", len(p.Edits))
		}
	})
	t.Run("Cancel", func(t *testing.T) {
		b := b.with(t)
		to := b.submit(list+"/"+cancelled+"/cancel", list+"/"+cancelled+"/cancel", url.Values{"confirmed": {"yes"}})
		if to != list {
			t.Errorf("cancel: got redirect to %q, want %q", to, list)
		}
		if p, err := e.db.Push(context.Background(), cancelled); err != nil || p.Status != herald.StatusCancelled {
			t.Fatalf("cancelled push: got %q %v, want cancelled", p.Status, err)
		}
		if _, body := b.get(list); strings.Contains(body, "cancel-"+cancelled) || !strings.Contains(body, "cancelled") {
			t.Errorf("list after cancel: got %s, want the notice and the push gone", body)
		}
	})
	t.Run("Pages", func(t *testing.T) { checkPages(t, b, appPath, edited, cancelled) })
	t.Run("ErrTooLate", func(t *testing.T) {
		b := b.with(t)
		editPath := list + "/" + edited
		e.clock.Set(time.Date(2026, 12, 1, 13, 56, 0, 0, seoul)) // past the session's idle limit: b signs in again
		token := b.csrf(editPath)
		resp, body := b.post(editPath, url.Values{"csrf": {token}, "title": {"Late"}, "content": {"c"}, "scheduleTime": {"2026-12-01T14:00"}})
		wantStatus(t, resp, body, http.StatusConflict)
		if !strings.Contains(body, "until 5 minutes before its send time") || !strings.Contains(body, "ERR-AB-SCH-01") || !strings.Contains(body, ">\nLate</textarea>") {
			t.Errorf("late edit: got %s, want the readable 5-minute rule and the form kept", body)
		}
		resp, body = b.post(list+"/"+edited+"/cancel", url.Values{"csrf": {token}, "confirmed": {"yes"}})
		wantStatus(t, resp, body, http.StatusConflict)
	})
}

// checkPages reads the history, push, usage and user pages of an app with
// one edited and one cancelled push.
func checkPages(t *testing.T, b *browser, appPath, edited, cancelled string) {
	t.Helper()
	b = b.with(t)
	pages := []struct {
		path   string
		status int
		want   []string
	}{
		{"/pushes", http.StatusOK, []string{cancelled, edited}},
		{"/pushes?status=cancelled", http.StatusOK, []string{cancelled}},
		{"/pushes?status=nope", http.StatusBadRequest, []string{"<code>status</code> must be"}},
		{"/pushes?cursor=push_0000000000000000000000&requestGroupId=none", http.StatusOK, []string{"No pushes match these filters."}},
		{"/pushes?cursor=zzz", http.StatusBadRequest, []string{"<code>cursor</code>"}},
		{"/pushes/" + edited, http.StatusOK, []string{"Edited", "<code>title</code>: <del>First</del> → <ins>Edited</ins>", "Edit or cancel this scheduled push"}},
		{"/usage?from=2026-12-01&to=2026-12-01", http.StatusOK, []string{`id="usage-total">0.5<`}},
		{"/usage?from=2026-12-02&to=2026-12-01", http.StatusBadRequest, []string{"<code>from</code> must not be after to"}},
		{"/users?userId=nobody", http.StatusNotFound, []string{"No user with this ID was ever registered"}},
	}
	for _, pg := range pages {
		resp, body := b.get(appPath + pg.path)
		if resp.StatusCode != pg.status {
			t.Errorf("GET %s: got %d, want %d", pg.path, resp.StatusCode, pg.status)
		}
		for _, w := range pg.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: want %q in\n%s", pg.path, w, body)
			}
		}
	}
	// Newest first in the history.
	if _, body := b.get(appPath + "/pushes"); strings.Index(body, cancelled) > strings.Index(body, edited) {
		t.Errorf("history: want %s (newer) before %s", cancelled, edited)
	}
	if resp, _ := b.get(appPath + "/pushes/push_unknown"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown push: got %d, want 404", resp.StatusCode)
	}
}
