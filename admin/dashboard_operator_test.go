package admin_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/admin"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
)

// signedIn is a browser signed in to the dashboard as one operator (or the
// owner), keeping its cookies, following no redirect.
type signedIn struct {
	t    *testing.T
	base string
	csrf string
	hc   *http.Client
}

func (e *env) signIn(t *testing.T, operatorID string) *signedIn {
	t.Helper()
	return e.signInAt(t, operatorID, time.Now())
}

// signInAt is signIn at a time of the node's clock, for a test that sets it.
func (e *env) signInAt(t *testing.T, operatorID string, at time.Time) *signedIn {
	t.Helper()
	cookie, csrf, err := admin.SignInSession(context.Background(), e.Store, testenv.AdminToken, operatorID, at)
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	u, _ := url.Parse(e.Admin.URL)
	jar.SetCookies(u, []*http.Cookie{{Name: "herald_session", Value: cookie, Path: "/"}})
	return &signedIn{t: t, base: e.Admin.URL, csrf: csrf, hc: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// page is one answer of the dashboard.
type page struct {
	status   int
	body     string
	location string
}

func (b *signedIn) do(method, path string, form url.Values) page {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		form.Set("csrf", b.csrf)
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, b.base+path, body)
	req.Header.Set("Accept", "text/html")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return page{res.StatusCode, string(raw), res.Header.Get("Location")}
}

func (b *signedIn) get(path string) page { b.t.Helper(); return b.do("GET", path, nil) }

// post posts a form and, when it redirects, follows to the page it leads
// to (with the notice and the secret it left).
func (b *signedIn) post(path string, form url.Values) page {
	b.t.Helper()
	p := b.do("POST", path, form)
	if p.status == http.StatusSeeOther {
		return b.get(p.location)
	}
	return p
}

var shownSecret = regexp.MustCompile(`<code id="shown-secret">([^<]+)</code>`)

func TestDashboardOperators(t *testing.T) {
	e := start(t)
	a, b := e.NewAppWithoutFCM(map[string]any{"name": "Shop"}), e.NewAppWithoutFCM(map[string]any{"name": "Bank"})
	bossID, _ := e.newOperator("boss@example.com", "admin", nil)
	br := e.signIn(t, bossID)
	ctx := context.Background()

	if p := br.get("/"); !strings.Contains(p.body, `href="/operators"`) {
		t.Errorf("an admin of every app's navigation lacks the Operators page")
	}
	// Add: the setup link is shown once, on the operator's page.
	p := br.post("/operators", url.Values{"email": {"mina@example.com"}, "name": {"Mina"}, "role": {"operator"},
		"scope": {"some"}, "app": {a.ID}})
	m := shownSecret.FindStringSubmatch(p.body)
	if p.status != http.StatusOK || m == nil || !strings.HasPrefix(m[1], e.Admin.URL+"/setup?token=") {
		t.Fatalf("after adding: %d, setup link %v", p.status, m)
	}
	ops, err := e.Store.Operators(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var mina herald.Operator
	for _, o := range ops {
		if o.Email == "mina@example.com" {
			mina = o
		}
	}
	if mina.Role != herald.RoleOperator || len(mina.Apps) != 1 || mina.Apps[0] != a.ID {
		t.Fatalf("added %+v", mina)
	}
	u, _ := url.Parse(m[1])
	if o, err := e.Store.SetupLink(ctx, hashOf(u.Query().Get("token"))); err != nil || o.ID != mina.ID {
		t.Errorf("the link shown: %v, %v", o.ID, err)
	}
	if p := br.get("/operators/" + mina.ID); shownSecret.MatchString(p.body) {
		t.Error("the setup link is shown again")
	}
	minaPath := "/operators/" + mina.ID

	t.Run("SameRulesAsTheAPI", func(t *testing.T) {
		p := br.post("/operators", url.Values{"email": {"MINA@example.com"}, "name": {"Again"}, "role": {"viewer"}, "scope": {"every"}})
		if p.status != http.StatusConflict || !strings.Contains(p.body, herald.ErrOperatorExists.Code) {
			t.Errorf("a duplicate email: %d", p.status)
		}
		p = br.post("/operators", url.Values{"email": {"x@example.com"}, "name": {"X"}, "role": {"boss"}, "scope": {"some"}, "app": {"app_none"}})
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, "<code>role</code>") || !strings.Contains(p.body, "<code>apps[0]</code>") {
			t.Errorf("a bad role and app: %d", p.status)
		}
		if p := br.post("/operators/"+bossID+"/disabled", url.Values{"disabled": {"true"}}); p.status != http.StatusBadRequest {
			t.Errorf("disabling yourself: %d", p.status)
		}
		if p := br.get("/operators/" + bossID + "/delete"); !strings.Contains(p.body, "You cannot delete yourself.") {
			t.Error("the delete page of yourself does not say it cannot be done")
		}
	})
	t.Run("Edit", func(t *testing.T) {
		p := br.post(minaPath, url.Values{"name": {"Mina Park"}, "role": {"viewer"}, "scope": {"some"}, "app": {a.ID, b.ID}})
		if p.status != http.StatusOK {
			t.Fatalf("edit: %d", p.status)
		}
		o, _ := e.Store.Operator(ctx, mina.ID)
		if o.Name != "Mina Park" || o.Role != herald.RoleViewer || len(o.Apps) != 2 {
			t.Errorf("after the edit: %+v", o)
		}
		br.post(minaPath, url.Values{"name": {"Mina Park"}, "role": {"operator"}, "scope": {"every"}})
		if o, _ := e.Store.Operator(ctx, mina.ID); o.Apps != nil || o.Role != herald.RoleOperator {
			t.Errorf("every app: %+v", o)
		}
	})
	t.Run("Tokens", func(t *testing.T) {
		p := br.post(minaPath+"/tokens", url.Values{"name": {"ci"}, "expiresInDays": {"30"}})
		m := shownSecret.FindStringSubmatch(p.body)
		if m == nil || !strings.HasPrefix(m[1], "hop_") {
			t.Fatalf("token not shown: %d", p.status)
		}
		token := m[1]
		if res := e.as(token, "GET", "/admin/v1/me", nil); res.Status != http.StatusOK {
			t.Errorf("the token made on the page: %d", res.Status)
		}
		if p := br.post(minaPath+"/tokens", url.Values{"name": {"ci"}, "expiresInDays": {"400"}}); p.status != http.StatusBadRequest || !strings.Contains(p.body, "<code>expiresInDays</code>") {
			t.Errorf("400 days: %d", p.status)
		}
		ts, _ := e.Store.OperatorTokens(ctx, mina.ID)
		if len(ts) != 1 || !strings.Contains(br.get(minaPath).body, `id="token-`+ts[0].ID+`"`) {
			t.Fatalf("tokens: %+v", ts)
		}
		br.post(minaPath+"/tokens/"+ts[0].ID+"/delete", url.Values{})
		testenv.WantError(t, e.as(token, "GET", "/admin/v1/me", nil), "/admin/v1/me", herald.ErrUnauthorized)
	})
	t.Run("DisableAndEnable", func(t *testing.T) {
		mb := e.signIn(t, mina.ID)
		if p := mb.get("/"); p.status != http.StatusOK {
			t.Fatalf("mina's session: %d", p.status)
		}
		br.post(minaPath+"/disabled", url.Values{"disabled": {"true"}})
		if p := mb.get("/"); p.status != http.StatusSeeOther || p.location != "/login" {
			t.Errorf("a disabled operator's session: %d %s", p.status, p.location)
		}
		br.post(minaPath+"/disabled", url.Values{"disabled": {"false"}})
		if o, _ := e.Store.Operator(ctx, mina.ID); o.Disabled {
			t.Error("not enabled again")
		}
	})
	t.Run("ResetTOTP", func(t *testing.T) {
		if err := e.Store.SetPendingTOTP(ctx, mina.ID, []byte("sealed")); err != nil {
			t.Fatal(err)
		}
		if err := e.Store.ConfirmTOTP(ctx, mina.ID); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(br.get(minaPath).body, `id="reset-totp"`) {
			t.Fatal("no reset button for an enrolled operator")
		}
		br.post(minaPath+"/totp/delete", url.Values{})
		if o, _ := e.Store.Operator(ctx, mina.ID); o.TOTP {
			t.Error("TOTP not reset")
		}
	})
	t.Run("NewSetupLink", func(t *testing.T) {
		p := br.post(minaPath+"/setup-link", url.Values{})
		m := shownSecret.FindStringSubmatch(p.body)
		if m == nil {
			t.Fatal("no link shown")
		}
		u, _ := url.Parse(m[1])
		if o, err := e.Store.SetupLink(ctx, hashOf(u.Query().Get("token"))); err != nil || o.ID != mina.ID {
			t.Errorf("the new link: %v, %v", o.ID, err)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		if p := br.do("POST", minaPath+"/delete", url.Values{}); p.status != http.StatusSeeOther || p.location != minaPath+"/delete" {
			t.Errorf("an unconfirmed delete: %d %s, want the confirm page", p.status, p.location)
		}
		if _, err := e.Store.Operator(ctx, mina.ID); err != nil {
			t.Fatalf("deleted unconfirmed: %v", err)
		}
		br.post(minaPath+"/delete", url.Values{"confirmed": {"yes"}})
		if _, err := e.Store.Operator(ctx, mina.ID); err == nil {
			t.Error("not deleted")
		}
	})
}

// TestDashboardScope: an operator's dashboard lists only its apps, answers
// another app's pages 404, hides what its role cannot use and answers
// those pages 403; a viewer's push page shows no per-user rows.
func TestDashboardScope(t *testing.T) {
	e := start(t)
	a, b := e.NewApp(map[string]any{"name": "Shop"}), e.NewApp(map[string]any{"name": "Bank"})
	e.Register(a, "tok-", "u1")
	id := e.pushTo(t, a, "u1", "nobody")
	viewerID, _ := e.newOperator("v@example.com", "viewer", []string{a.ID})
	operatorID, _ := e.newOperator("o@example.com", "operator", []string{a.ID})
	v, o := e.signIn(t, viewerID), e.signIn(t, operatorID)

	apps := v.get("/")
	if !strings.Contains(apps.body, a.ID) || strings.Contains(apps.body, b.ID) {
		t.Error("a viewer of Shop's apps page: want Shop alone")
	}
	for _, hidden := range []string{`id="new-app"`, `href="/operators"`} {
		if strings.Contains(apps.body, hidden) {
			t.Errorf("a viewer's apps page shows %s", hidden)
		}
	}
	if p := v.get("/apps/" + b.ID + "/overview"); p.status != http.StatusNotFound {
		t.Errorf("another app's overview: %d, want 404", p.status)
	}
	app := v.get("/apps/" + a.ID)
	for _, hidden := range []string{`id="settings"`, `id="fcm"`, `id="reissue-secret"`, `id="test-push"`, `id="webhook"`, `id="delete-app"`,
		`href="/apps/` + a.ID + `/users"`, `href="/apps/` + a.ID + `/compose"`} {
		if strings.Contains(app.body, hidden) {
			t.Errorf("a viewer's app page shows %s", hidden)
		}
	}
	if !strings.Contains(app.body, `id="api-key"`) {
		t.Error("a viewer's app page lacks the API key")
	}
	if p := v.get("/apps/" + a.ID + "/users"); p.status != http.StatusForbidden || !strings.Contains(p.body, "Not allowed for this operator.") {
		t.Errorf("a viewer's users page: %d", p.status)
	}
	push := v.get("/apps/" + a.ID + "/pushes/" + id)
	if push.status != http.StatusOK || strings.Contains(push.body, "nobody") || !strings.Contains(push.body, `id="no-user-rows"`) {
		t.Errorf("a viewer's push page: %d, shows per-user rows: %v", push.status, strings.Contains(push.body, "nobody"))
	}
	if p := o.get("/apps/" + a.ID + "/pushes/" + id); !strings.Contains(p.body, "nobody") {
		t.Error("an operator's push page lacks its unreachable user")
	}
	app = o.get("/apps/" + a.ID)
	if !strings.Contains(app.body, `id="test-push"`) || strings.Contains(app.body, `id="settings"`) {
		t.Error("an operator's app page: want the test push and no settings")
	}
	before, _ := e.Store.App(context.Background(), a.ID)
	if p := o.post("/apps/"+a.ID+"/settings", url.Values{"name": {"Renamed"}}); p.status != http.StatusForbidden {
		t.Errorf("an operator's settings post: %d, want 403", p.status)
	}
	if after, _ := e.Store.App(context.Background(), a.ID); after.Name != before.Name {
		t.Errorf("a refused settings post renamed the app to %q", after.Name)
	}
}

// pushTo sends a push to users and waits until it has ended.
func (e *env) pushTo(t *testing.T, a testenv.App, users ...any) string {
	t.Helper()
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: users, Title: "Hello", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	e.WaitFinal(res.PushID, 30*time.Second)
	return res.PushID
}
