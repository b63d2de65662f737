package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

func TestAppUserTierRuleEndToEnd(t *testing.T) {
	t.Parallel()
	e := start(t)
	enable := herald.Detail{Field: "appUserEnabled", Reason: "needs the business tier or higher (the tier is basic)"}
	t.Run("AdminCreate", func(t *testing.T) {
		var res testenv.ErrorBody
		if code := e.AdminJSON(http.MethodPost, "/admin/v1/apps", map[string]any{"name": "low", "tier": "basic", "appUserEnabled": true}, &res); code != http.StatusBadRequest ||
			len(res.Details) != 1 || res.Details[0] != enable {
			t.Errorf("got %d %+v, want 400 with %+v", code, res, enable)
		}
	})
	t.Run("AdminPatch", func(t *testing.T) {
		a := e.NewAppWithoutFCM(map[string]any{"tier": "basic"})
		var res testenv.ErrorBody
		if code := e.AdminJSON(http.MethodPatch, "/admin/v1/apps/"+a.ID, map[string]any{"appUserEnabled": true}, &res); code != http.StatusBadRequest ||
			len(res.Details) != 1 || res.Details[0] != enable {
			t.Errorf("got %d %+v, want 400 with %+v", code, res, enable)
		}
		// The app never looks enabled: it answers 403, as its settings say.
		const path = "/api/app-user/v2/marketing"
		res2 := e.ServerDo(http.MethodPatch, path, a.Keys(), `{"userId":"u1","state":{"marketing":true}}`)
		testenv.WantError(t, res2, path, herald.ErrMarketingUnavailable.With((herald.App{Tier: herald.TierBasic}).AppUserProblems()...))
		var got struct{ AppUserEnabled bool }
		e.AdminJSON(http.MethodGet, "/admin/v1/apps/"+a.ID, nil, &got)
		if got.AppUserEnabled {
			t.Errorf("app after refused patch: appUserEnabled true, want false")
		}
	})
	t.Run("CLI", func(t *testing.T) {
		var out, errOut bytes.Buffer
		err := run(context.Background(), []string{"app", "create", "--name", "Low", "--tier", "basic", "--app-user",
			"--server", e.svc.AdminURL, "--token", e.adminTok}, func(string) string { return "" }, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), "--app-user: needs the business tier or higher (the tier is basic)") {
			t.Errorf("herald app create --tier basic --app-user: got %v, want the admin API's reason", err)
		}
	})
	t.Run("Dashboard", func(t *testing.T) {
		body := e.dashboardCreate(t, url.Values{"name": {"Low"}, "tier": {"basic"}, "appUserEnabled": {"false", "true"}, "timeZone": {"Asia/Seoul"}})
		if !strings.Contains(body, "<code>appUserEnabled</code> needs the business tier or higher (the tier is basic)") {
			t.Errorf("dashboard create: got %s, want the tier rule shown", body)
		}
	})
	var list struct{ Apps []struct{ Name string } }
	e.AdminJSON(http.MethodGet, "/admin/v1/apps", nil, &list)
	for _, a := range list.Apps {
		if a.Name == "low" || a.Name == "Low" {
			t.Errorf("apps: got %q stored, want every low-tier app-user create refused", a.Name)
		}
	}
}

// dashboardCreate signs in to the dashboard, posts the new-app form and
// wants it refused with 400; it returns the page.
func (e *env) dashboardCreate(t *testing.T, form url.Values) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(path string, form url.Values) (int, string) {
		resp, err := hc.PostForm(e.svc.AdminURL+path, form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("/login", url.Values{"token": {e.adminTok}}); code != http.StatusSeeOther {
		t.Fatalf("login: got %d %s, want 303", code, body)
	}
	resp, err := hc.Get(e.svc.AdminURL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfInput.FindSubmatch(page)
	if m == nil {
		t.Fatalf("apps page: got %s, want a csrf field", page)
	}
	form.Set("csrf", string(m[1]))
	code, body := post("/apps", form)
	if code != http.StatusBadRequest {
		t.Fatalf("create: got %d, want 400:\n%s", code, body)
	}
	return body
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
