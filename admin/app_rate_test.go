package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

// sendRate reads an app's sendRatePerMinute through GET.
func sendRate(t *testing.T, env *testenv.Env, id string) int {
	t.Helper()
	res := env.AdminDo(t, http.MethodGet, "/admin/v1/apps/"+id, nil)
	var a struct {
		SendRatePerMinute *int `json:"sendRatePerMinute"`
	}
	res.Decode(t, &a)
	if res.Status != http.StatusOK || a.SendRatePerMinute == nil {
		t.Fatalf("get app: got %d %s, want 200 with sendRatePerMinute", res.Status, res.Body)
	}
	return *a.SendRatePerMinute
}

// TestAppSendRate: an app's send rate is FCM's quota unless set on create
// or patch; a rate that is not a whole number from 1 to 10,000,000 is
// refused with 400 naming the member, and changes nothing.
func TestAppSendRate(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	plain := env.CreateApp(t, map[string]any{"name": "plain"})
	if got := sendRate(t, env, plain.ID); got != herald.DefaultSendRatePerMinute {
		t.Errorf("default: got %d, want %d", got, herald.DefaultSendRatePerMinute)
	}
	res := env.AdminDo(t, http.MethodPost, "/admin/v1/apps", map[string]any{"name": "slow", "sendRatePerMinute": 600})
	var created struct {
		AppID             string `json:"appId"`
		SendRatePerMinute int    `json:"sendRatePerMinute"`
	}
	res.Decode(t, &created)
	if res.Status != http.StatusCreated || created.SendRatePerMinute != 600 || sendRate(t, env, created.AppID) != 600 {
		t.Fatalf("create with 600: got %d %s, want 201 with 600 stored", res.Status, res.Body)
	}
	path := "/admin/v1/apps/" + plain.ID
	if res := env.AdminDo(t, http.MethodPatch, path, map[string]any{"sendRatePerMinute": 1.2e6}); res.Status != http.StatusOK {
		t.Fatalf("patch 1.2e6: got %d %s, want 200", res.Status, res.Body)
	}
	if got := sendRate(t, env, plain.ID); got != 1_200_000 {
		t.Errorf("after patch: got %d, want 1200000", got)
	}
	if res := env.AdminDo(t, http.MethodPatch, path, map[string]any{"name": "renamed"}); res.Status != http.StatusOK || sendRate(t, env, plain.ID) != 1_200_000 {
		t.Errorf("patch without the rate: got %d, want 200 and the rate kept", res.Status)
	}

	for _, tc := range []struct {
		name string
		body string
	}{
		{"ErrZero", `{"sendRatePerMinute":0}`},
		{"ErrNegative", `{"sendRatePerMinute":-600}`},
		{"ErrFraction", `{"sendRatePerMinute":10.5}`},
		{"ErrAboveCap", `{"sendRatePerMinute":10000001}`},
		{"ErrHuge", `{"sendRatePerMinute":1e400}`},
		{"ErrString", `{"sendRatePerMinute":"600"}`},
		{"ErrBool", `{"sendRatePerMinute":true}`},
		{"ErrNull", `{"sendRatePerMinute":null,"tier":"gold"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := testenv.WantError(t, env.AdminDo(t, http.MethodPatch, path, []byte(tc.body)), path, herald.ErrInvalidRequest)
			want := "sendRatePerMinute"
			if tc.name == "ErrNull" {
				want = "tier" // null leaves the rate alone, as with every member
			}
			if len(got.Details) != 1 || got.Details[0].Field != want {
				t.Errorf("details: got %+v, want one on %s", got.Details, want)
			}
			body := strings.Replace(tc.body, "{", `{"name":"x",`, 1)
			testenv.WantError(t, env.AdminDo(t, http.MethodPost, "/admin/v1/apps", []byte(body)), "/admin/v1/apps", herald.ErrInvalidRequest)
		})
	}
	if got := sendRate(t, env, plain.ID); got != 1_200_000 {
		t.Errorf("after refused patches: got %d, want 1200000 unchanged", got)
	}
	res = env.AdminDo(t, http.MethodGet, "/admin/v1/apps", nil)
	var list struct{ Apps []any }
	if res.Decode(t, &list); len(list.Apps) != 2 {
		t.Errorf("apps after refused creates: got %d, want 2", len(list.Apps))
	}
}

// TestDashboardSendRate: the settings form shows the app's send rate and
// changes it; a rate out of bounds or not a number is refused with the
// API's reason and changes nothing.
func TestDashboardSendRate(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	a := newDashApp(t, e, b)
	ctx := context.Background()
	_, body := b.get(a.path)
	wantIn(t, "app page", body, `name="sendRatePerMinute"`, `value="600000"`)
	settings := url.Values{"name": {"Scheduler"}, "tier": {"free"}, "timeZone": {"Asia/Seoul"}, "sendRatePerMinute": {"1,200"}}
	b.submit(a.path, a.path+"/settings", settings)
	if got, _ := e.db.App(ctx, a.app.ID); got.SendRatePerMinute != 1200 {
		t.Fatalf("after the form: got %d, want 1200", got.SendRatePerMinute)
	}
	_, body = b.get(a.path)
	wantIn(t, "app page", body, `value="1200"`)
	for _, bad := range []string{"0", "-5", "2.5", "10000001", "fast", ""} {
		settings.Set("sendRatePerMinute", bad)
		settings.Set("csrf", b.csrf(a.path))
		resp, body := b.post(a.path+"/settings", settings)
		wantStatus(t, resp, body, http.StatusBadRequest)
		wantIn(t, "refused form "+bad, body, "sendRatePerMinute", herald.ReasonSendRate)
	}
	if got, _ := e.db.App(ctx, a.app.ID); got.SendRatePerMinute != 1200 {
		t.Errorf("after refused forms: got %d, want 1200 unchanged", got.SendRatePerMinute)
	}
}
