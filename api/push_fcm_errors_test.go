package api_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
)

// TestPushAuthFailures: a THIRD_PARTY_AUTH_ERROR (the project's APNs or
// web-push credentials) fails that delivery only and warns the operator; a
// push fails as a whole, with the reason, when the token endpoint refuses
// its service account.
func TestPushAuthFailures(t *testing.T) {
	t.Parallel()
	e := start(t)

	t.Run("ThirdPartyAuthError", func(t *testing.T) {
		a := e.NewApp(nil)
		e.Device(a, "dev-ios", "auth-ios", "ios", "1.6.0", "u1")
		e.Device(a, "dev-android", "fine-android", "android", "1.6.0", "u1")
		e.Device(a, "dev-u2", "fine-u2", "android", "1.6.0", "u2")
		res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1", "u2"}, Title: "t", Content: "c"})
		if err != nil {
			t.Fatalf("push: got %v, want nil", err)
		}
		p := e.WaitFinal(res.PushID, 10*time.Second)
		if p.Status != "done" || p.FailureReason != "" {
			t.Errorf("push: got status %s reason %q, want done", p.Status, p.FailureReason)
		}
		if c := p.Counts; c.Tokens != 3 || c.Sent != 2 || c.Failed != 1 || c.Unreachable != 0 {
			t.Errorf("counts: got %+v, want 3 tokens, 2 sent, 1 failed, none unreachable", c)
		}
		if len(p.Failures) != 1 || p.Failures[0].UserID != "u1" || !strings.Contains(p.Failures[0].Error, "THIRD_PARTY_AUTH_ERROR") {
			t.Errorf("failures: got %+v, want u1's ios token failed with THIRD_PARTY_AUTH_ERROR", p.Failures)
		}
		if got := e.SentTo(res.PushID); got["fine-android"] != 1 || got["fine-u2"] != 1 || len(got) != 2 {
			t.Errorf("messages by token: got %v, want one to each android token", got)
		}
		if u := e.UserView(a, "u1"); len(u.Devices) != 2 {
			t.Errorf("devices: got %d, want 2 (an auth error says nothing about the token)", len(u.Devices))
		}
		if logs := e.Log.String(); !strings.Contains(logs, "FCM refused the app's credentials") || !strings.Contains(logs, res.PushID) {
			t.Errorf("logs: want a warning naming push %s:\n%s", res.PushID, logs)
		}
		if page := e.dashboardPage("/apps/" + a.ID); !strings.Contains(page, `id="fcm-warning"`) || !strings.Contains(page, "APNs or web-push") {
			t.Errorf("app page: want the FCM warning:\n%s", page)
		}
	})
	// FCM's legacy spelling of THIRD_PARTY_AUTH_ERROR is the same error.
	t.Run("LegacyApnsAuthError", func(t *testing.T) {
		a := e.NewApp(nil)
		e.Device(a, "dev-ios", "apnsauth-ios", "ios", "1.6.0", "u1")
		e.Device(a, "dev-u2", "fine-u2", "android", "1.6.0", "u2")
		res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1", "u2"}, Title: "t", Content: "c"})
		if err != nil {
			t.Fatalf("push: got %v, want nil", err)
		}
		p := e.WaitFinal(res.PushID, 10*time.Second)
		if p.Status != "done" || p.FailureReason != "" {
			t.Errorf("push: got status %s reason %q, want done", p.Status, p.FailureReason)
		}
		if c := p.Counts; c.Tokens != 2 || c.Sent != 1 || c.Failed != 1 {
			t.Errorf("counts: got %+v, want 2 tokens, 1 sent, 1 failed", c)
		}
		if len(p.Failures) != 1 || p.Failures[0].UserID != "u1" || !strings.Contains(p.Failures[0].Error, "APNS_AUTH_ERROR") {
			t.Errorf("failures: got %+v, want u1's ios token failed with APNS_AUTH_ERROR", p.Failures)
		}
		if got := e.SentTo(res.PushID); got["fine-u2"] != 1 || len(got) != 1 {
			t.Errorf("messages by token: got %v, want one to fine-u2", got)
		}
		if page := e.dashboardPage("/apps/" + a.ID); !strings.Contains(page, `id="fcm-warning"`) || !strings.Contains(page, "APNs or web-push") {
			t.Errorf("app page: want the FCM warning:\n%s", page)
		}
	})
	t.Run("DeniedProject", func(t *testing.T) {
		a := e.NewAppWithoutFCM(nil)
		e.PutCredentials(a, "denied-project")
		e.Register(a, "deny-", "u1", "u2")
		res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1", "u2"}, Title: "t", Content: "c"})
		if err != nil {
			t.Fatalf("push: got %v, want nil", err)
		}
		p := e.WaitFinal(res.PushID, 10*time.Second)
		if p.Status != "failed" || !strings.Contains(p.FailureReason, "invalid_grant") {
			t.Errorf("push: got status %s reason %q, want failed naming the token endpoint's invalid_grant", p.Status, p.FailureReason)
		}
		if got := e.SentTo(res.PushID); len(got) != 0 {
			t.Errorf("messages: got %v, want none", got)
		}
	})
}

// dashboardPage signs in to the dashboard with the admin token and returns
// the page at path.
func (e *env) dashboardPage(path string) string {
	e.T.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.PostForm(e.Admin.URL+"/login", url.Values{"token": {testenv.AdminToken}})
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		e.T.Fatalf("dashboard login: got %v %v, want 303", resp, err)
	}
	resp.Body.Close()
	resp, err = hc.Get(e.Admin.URL + path)
	if err != nil {
		e.T.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}
