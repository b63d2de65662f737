package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/request"
	"github.com/heraldpush/herald/server"
	"github.com/heraldpush/herald/webhook"
)

// wantDetail checks a 400 whose details hold want.
func wantDetail(t *testing.T, res testenv.Response, path string, want herald.Detail) {
	t.Helper()
	got := testenv.WantError(t, res, path, herald.ErrInvalidRequest)
	for _, d := range got.Details {
		if d == want {
			return
		}
	}
	t.Errorf("details: got %+v, want %+v", got.Details, want)
}

// TestAdminUnknownMembers: a member the admin API does not know is refused
// by its path, on create, patch and webhook bodies, and nothing changes.
func TestAdminUnknownMembers(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Config: server.Config{Webhook: webhook.SenderOptions{AllowPrivate: true}}})
	app := env.CreateApp(t, map[string]any{"name": "kept", "tier": "business"})
	appPath := "/admin/v1/apps/" + app.ID
	unknown := func(field string) herald.Detail { return herald.Detail{Field: field, Reason: "unknown field"} }
	tests := []struct {
		name, method, path string
		body               any
		want               herald.Detail
	}{
		{"CreateTypo", http.MethodPost, "/admin/v1/apps", `{"name":"a","tierr":"business"}`, unknown("tierr")},
		{"CreateCase", http.MethodPost, "/admin/v1/apps", `{"name":"a","Name":"b"}`, unknown("Name")},
		{"CreateNested", http.MethodPost, "/admin/v1/apps", `{"name":"a","defaultConsent":{"marketting":true}}`, unknown("defaultConsent.marketting")},
		{"CreateNull", http.MethodPost, "/admin/v1/apps", `{"name":"a","sandboxMode":null}`, unknown("sandboxMode")},
		{"CreateEmptyName", http.MethodPost, "/admin/v1/apps", `{"name":"a","":1}`, unknown(`""`)},
		{"Patch", http.MethodPatch, appPath, `{"name":"changed","appUserEnable":true}`, unknown("appUserEnable")},
		{"Webhook", http.MethodPut, appPath + "/webhook", `{"url":"http://127.0.0.1:9/h","secret":"whsec_mine"}`, unknown("secret")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantDetail(t, env.AdminDo(t, tt.method, tt.path, tt.body), tt.path, tt.want)
		})
	}
	got := getApp(t, env, app.ID)
	if got.Name != "kept" || got.WebhookURL != nil {
		t.Errorf("app after refused requests: got %+v, want unchanged", got)
	}
	var list struct{ Apps []appView }
	env.AdminDo(t, http.MethodGet, "/admin/v1/apps", nil).Decode(t, &list)
	if len(list.Apps) != 1 {
		t.Errorf("apps: got %d, want only the first (no refused create stored)", len(list.Apps))
	}
}

// TestAdminInvalidText: invalid UTF-8 and lone surrogates in admin bodies
// are refused, never stored as U+FFFD.
func TestAdminInvalidText(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	for _, tt := range []struct{ body, reason string }{
		{`{"name":"shop\ud800"}`, request.ReasonLoneSurrogate},
		{`{"name":"\udc00shop"}`, request.ReasonLoneSurrogate},
		{"{\"name\":\"shop\xff\"}", herald.ReasonInvalidUTF8},
		{`{"name":"a","defaultConsent":{"\ud800":true}}`, "member names must be valid UTF-8 without lone surrogate escapes"},
	} {
		field := "name"
		if strings.Contains(tt.body, "defaultConsent") {
			field = "defaultConsent"
		}
		wantDetail(t, env.AdminDo(t, http.MethodPost, "/admin/v1/apps", tt.body), "/admin/v1/apps", herald.Detail{Field: field, Reason: tt.reason})
	}
	app := env.CreateApp(t, map[string]any{"name": "\U0001F600 shop"})
	if got := getApp(t, env, app.ID); got.Name != "😀 shop" {
		t.Errorf("name with a surrogate pair: got %q, want 😀 shop", got.Name)
	}
}

// TestAppUserNeedsBusiness: the app-user feature is refused below the
// business tier, on create and on patch (turning it on, or lowering the
// tier under it); an app stored so before the rule keeps its settings.
func TestAppUserNeedsBusiness(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	const create = "/admin/v1/apps"
	enable := herald.Detail{Field: "appUserEnabled", Reason: "needs the business tier or higher (the tier is basic)"}
	t.Run("ErrCreate", func(t *testing.T) {
		wantDetail(t, env.AdminDo(t, http.MethodPost, create, map[string]any{"name": "a", "tier": "basic", "appUserEnabled": true}), create, enable)
		wantDetail(t, env.AdminDo(t, http.MethodPost, create, map[string]any{"name": "a", "appUserEnabled": true}), create,
			herald.Detail{Field: "appUserEnabled", Reason: "needs the business tier or higher (the tier is free)"})
		var list struct{ Apps []appView }
		env.AdminDo(t, http.MethodGet, create, nil).Decode(t, &list)
		if len(list.Apps) != 0 {
			t.Errorf("apps: got %+v, want none", list.Apps)
		}
	})
	t.Run("ErrPatchEnable", func(t *testing.T) {
		app := env.CreateApp(t, map[string]any{"tier": "basic"})
		path := "/admin/v1/apps/" + app.ID
		wantDetail(t, env.AdminDo(t, http.MethodPatch, path, map[string]any{"appUserEnabled": true}), path, enable)
		if got := getApp(t, env, app.ID); got.AppUserEnabled {
			t.Errorf("after refused patch: got %+v, want the feature off", got)
		}
		if res := env.AdminDo(t, http.MethodPatch, path, map[string]any{"appUserEnabled": true, "tier": "enterprise"}); res.Status != http.StatusOK {
			t.Errorf("enable with enterprise: got %d %s, want 200", res.Status, res.Body)
		}
	})
	t.Run("ErrPatchLowerTier", func(t *testing.T) {
		app := env.CreateApp(t, map[string]any{"tier": "business", "appUserEnabled": true})
		path := "/admin/v1/apps/" + app.ID
		wantDetail(t, env.AdminDo(t, http.MethodPatch, path, map[string]any{"tier": "free"}), path, herald.Detail{
			Field: "tier", Reason: "free is below business, which the app-user feature needs: turn appUserEnabled off in the same request"})
		if got := getApp(t, env, app.ID); got.Tier != "business" || !got.AppUserEnabled {
			t.Errorf("after refused patch: got %+v, want business with the feature on", got)
		}
		if res := env.AdminDo(t, http.MethodPatch, path, map[string]any{"tier": "free", "appUserEnabled": false}); res.Status != http.StatusOK {
			t.Errorf("lower and turn off: got %d %s, want 200", res.Status, res.Body)
		}
	})
	t.Run("StoredBeforeTheRule", func(t *testing.T) {
		app := env.CreateApp(t, map[string]any{"tier": "business", "appUserEnabled": true})
		lowerInStore(t, env, app.ID, herald.TierBasic)
		path := "/admin/v1/apps/" + app.ID
		for _, body := range []map[string]any{{"name": "renamed"}, {"appUserEnabled": true, "tier": "basic"}} {
			if res := env.AdminDo(t, http.MethodPatch, path, body); res.Status != http.StatusOK {
				t.Errorf("patch %v: got %d %s, want 200", body, res.Status, res.Body)
			}
		}
		if got := getApp(t, env, app.ID); got.Name != "renamed" || got.Tier != "basic" || !got.AppUserEnabled {
			t.Errorf("got %+v, want renamed and otherwise as stored", got)
		}
		wantDetail(t, env.AdminDo(t, http.MethodPatch, path, map[string]any{"tier": "free"}), path, herald.Detail{
			Field: "tier", Reason: "free is below business, which the app-user feature needs: turn appUserEnabled off in the same request"})
	})
}

// lowerInStore sets an app's tier in the store, as an app stored before the
// tier rule may hold.
func lowerInStore(t *testing.T, env *testenv.Env, appID string, tier herald.Tier) {
	t.Helper()
	ctx := context.Background()
	a, err := env.DB.App(ctx, appID)
	if err != nil {
		t.Fatal(err)
	}
	a.Tier = tier
	if err := env.DB.UpdateApp(ctx, a); err != nil {
		t.Fatal(err)
	}
}

// TestDashboardAppUserNeedsBusiness: the dashboard's forms show the tier
// rule and never store the feature on below business; an app stored so
// before the rule is shown as inactive.
func TestDashboardAppUserNeedsBusiness(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	form := url.Values{"name": {"Low"}, "tier": {"basic"}, "appUserEnabled": {"false", "true"}, "timeZone": {"Asia/Seoul"}, "csrf": {b.csrf("/")}}
	resp, body := b.post("/apps", form)
	wantStatus(t, resp, body, http.StatusBadRequest)
	if !strings.Contains(body, "<code>appUserEnabled</code> needs the business tier or higher (the tier is basic)") || !strings.Contains(body, `value="Low"`) {
		t.Errorf("create: got %s, want the tier rule and the form kept", body)
	}
	apps, err := e.db.ListApps(context.Background())
	if err != nil || len(apps) != 0 {
		t.Fatalf("apps after refused create: got %d %v, want none", len(apps), err)
	}

	appPath := b.submit("/", "/apps", url.Values{"name": {"Shop"}, "tier": {"basic"}, "timeZone": {"Asia/Seoul"}})
	id := strings.TrimPrefix(appPath, "/apps/")
	settings := url.Values{"name": {"Shop"}, "tier": {"basic"}, "appUserEnabled": {"false", "true"}, "registered": {"false", "true"},
		"timeZone": {"Asia/Seoul"}, "csrf": {b.csrf(appPath)}}
	resp, body = b.post(appPath+"/settings", settings)
	wantStatus(t, resp, body, http.StatusBadRequest)
	if !strings.Contains(body, "needs the business tier or higher") || strings.Contains(body, `id="app-users" name="appUserEnabled" value="true" checked`) {
		t.Errorf("settings: got %s, want the tier rule and the box unchecked (as stored)", body)
	}
	if a, _ := e.db.App(context.Background(), id); a.AppUserEnabled {
		t.Errorf("stored after refused settings: got the feature on, want off")
	}

	a, _ := e.db.App(context.Background(), id)
	a.AppUserEnabled = true // stored before the rule
	if err := e.db.UpdateApp(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if _, body := b.get(appPath); !strings.Contains(body, `id="app-users-inactive"`) {
		t.Errorf("app page of a basic app with the feature on: got %s, want it shown inactive", body)
	}
	if _, body := b.get("/"); !strings.Contains(body, "inactive: tier below business") {
		t.Errorf("apps list: got %s, want the feature shown inactive", body)
	}
}

// TestAdminPushEditUnknownMembers: PATCH of a scheduled push refuses a
// member it does not know, so a mistyped scheduleTime never leaves the time
// as it was while the title changes.
func TestAdminPushEditUnknownMembers(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	_, id, _ := withScheduledApp(t, e, b)
	path := "/admin/v1/pushes/" + id
	for _, tt := range []struct {
		body string
		want herald.Detail
	}{
		{`{"title":"New","scheduletime":"2026-12-01T15:00"}`, herald.Detail{Field: "scheduletime", Reason: "unknown field"}},
		{`{"title":"New \ud800"}`, herald.Detail{Field: "title", Reason: request.ReasonLoneSurrogate}},
	} {
		res := testenv.Send(t, http.DefaultClient, e.admin.URL, testenv.Request{Method: http.MethodPatch, URL: path,
			Header: map[string]string{"Authorization": "Bearer " + testenv.AdminToken}, Body: tt.body})
		wantDetail(t, res, path, tt.want)
	}
	if p, err := e.db.Push(context.Background(), id); err != nil || p.Content.Title != "First" || len(p.Edits) != 0 {
		t.Errorf("push after refused edits: got %+v %v, want unchanged", p, err)
	}
}
