package admin_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

// TestDashboardTestPushToken: the app page's test push form takes a token
// instead of a user: the push is of kind token, free, and its page says
// which token (by its suffix); a user and a token at once are refused.
func TestDashboardTestPushToken(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	appPath, _, _ := withScheduledApp(t, e, b)
	_, body := b.get(appPath)
	wantIn(t, "app page", body, `id="test-token"`, `name="token"`)
	resp, body := b.post(appPath+"/test-push", url.Values{"csrf": {b.csrf(appPath)}, "token": {"dash-token-12345678"}, "title": {"T"}, "content": {"c"}})
	wantStatus(t, resp, body, http.StatusNotFound)
	wantIn(t, "test push to a token no device holds", body, "No device to send to.", "ERR-AB-VAL-02",
		"<code>token</code> no device of this app holds this token", `value="dash-token-12345678"`)
	e.register(t, appPath, "d1", "dash-token-12345678", "")
	to := b.submit(appPath, appPath+"/test-push", url.Values{"token": {"dash-token-12345678"}, "title": {"Test"}, "content": {"To a token"}})
	if !strings.HasPrefix(to, appPath+"/pushes/push_") {
		t.Fatalf("test push: got redirect to %q, want the push page", to)
	}
	_, body = b.get(to)
	wantIn(t, "push page", body, "Test push sent to the device holding token …12345678, not charged", "To a token")
	p, err := e.db.Push(context.Background(), strings.TrimPrefix(to, appPath+"/pushes/"))
	if err != nil || p.Kind != herald.KindToken || p.Token != "dash-token-12345678" || p.ServerActionsHalf != 0 || p.RequestedUsers != 1 {
		t.Fatalf("test push: got %+v %v, want a free token push to dash-token-12345678", p, err)
	}
	resp, body = b.post(appPath+"/test-push", url.Values{"csrf": {b.csrf(appPath)}, "userId": {"u1"}, "token": {"dash-token-12345678"},
		"title": {"Kept"}, "content": {"c"}})
	wantStatus(t, resp, body, http.StatusBadRequest)
	wantIn(t, "refused test push", body, "<code>token</code> give either token or userId, not both", `value="Kept"`,
		`value="dash-token-12345678"`)
}

// register registers a device on the app of appPath ("/apps/{appId}"),
// mapped to user when it is not "".
func (e *dashEnv) register(t *testing.T, appPath, device, token, user string) {
	t.Helper()
	reg := herald.DeviceRegistration{DeviceID: device, Token: token, Platform: herald.PlatformAndroid, AppSourceVersion: "1.6.0"}
	if user != "" {
		reg.UserID = &user
	}
	if _, err := e.db.RegisterDevice(context.Background(), strings.TrimPrefix(appPath, "/apps/"), reg); err != nil {
		t.Fatalf("register %s: %v", device, err)
	}
}

// TestTestPushAdFooter: an admin test push with a (광고) title is an ad:
// refused naming each unset footer setting (nothing stored), and once they
// are set accepted with the footer, which the push's JSON shows as
// adFooter beside the content as given; a plain test push has none.
func TestTestPushAdFooter(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	appPath, _, _ := withScheduledApp(t, e, b)
	appID := strings.TrimPrefix(appPath, "/apps/")
	ctx := context.Background()
	do := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, e.admin.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testenv.AdminToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	before, _, _ := e.db.Pushes(ctx, appID, herald.PushFilter{Limit: 100})
	ad := `{"token":"dash-token-12345678","title":"(광고) Test","content":"c"}`
	status, body := do(http.MethodPost, "/admin/v1/apps/"+appID+"/test-push", ad)
	if status != http.StatusBadRequest || !strings.Contains(body, `"field":"app.adSender.name"`) ||
		!strings.Contains(body, `"field":"app.adSender.contact"`) || !strings.Contains(body, `"field":"app.adOptOut"`) {
		t.Fatalf("ad test push without the settings: got %d %s, want 400 naming the three settings", status, body)
	}
	if after, _, _ := e.db.Pushes(ctx, appID, herald.PushFilter{Limit: 100}); len(after) != len(before) {
		t.Errorf("refused test push: got %d pushes, want %d (nothing stored)", len(after), len(before))
	}
	if status, body := do(http.MethodPatch, "/admin/v1/apps/"+appID,
		`{"adSender":{"name":"Herald","contact":"080"},"adOptOut":"Opt out: Settings"}`); status != http.StatusOK {
		t.Fatalf("patch: got %d %s", status, body)
	}
	e.register(t, appPath, "dash-device", "dash-token-12345678", "")
	for _, tc := range []struct{ body, footer string }{
		{ad, `"adFooter":"\nHerald 080\nOpt out: Settings"`},
		{`{"token":"dash-token-12345678","title":"Test","content":"c"}`, `"adFooter":null`},
	} {
		status, body = do(http.MethodPost, "/admin/v1/apps/"+appID+"/test-push", tc.body)
		var res struct{ PushID string }
		if status != http.StatusOK || json.Unmarshal([]byte(body), &res) != nil {
			t.Fatalf("test push: got %d %s, want 200", status, body)
		}
		status, body = do(http.MethodGet, "/admin/v1/pushes/"+res.PushID, "")
		if status != http.StatusOK || !strings.Contains(body, tc.footer) || !strings.Contains(body, `"content":"c"`) {
			t.Errorf("push JSON: got %d %s, want %s and the content as given", status, body, tc.footer)
		}
	}
}
