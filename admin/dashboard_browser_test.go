package admin_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/browsertest"
	"github.com/heraldpush/herald/internal/testenv"

	"github.com/chromedp/chromedp"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/fcmtest"
)

// chromium returns the path of a Chromium to drive, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	return browsertest.Chromium(t, "the dashboard browser test")
}

// headless starts a headless Chromium (browsertest.Headless).
func headless(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	return browsertest.Headless(t, chromium(t), timeout)
}

// step runs browser actions with a deadline of their own.
var step = browsertest.Step

// text reads the visible text of the element the CSS selector finds.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("read %s: %v", sel, err)
	}
	return s
}

// browserNewApp signs in, creates an app and uploads its FCM credentials
// as a file, all through the dashboard; it returns the app's id and keys.
func browserNewApp(t *testing.T, ctx context.Context, e *env, name string) (appID, apiKey, secret string) {
	t.Helper()
	base := e.Admin.URL
	step(t, ctx, "sign in",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS("#token")), // an anonymous visit lands on the login page
		chromedp.SendKeys(chromedp.CSS("#token"), testenv.AdminToken),
		chromedp.Click(chromedp.CSS("#sign-in")),
		chromedp.WaitVisible(chromedp.CSS("#new-app")),
	)
	step(t, ctx, "create an app",
		chromedp.SetValue(chromedp.CSS("#new-app-name"), name),
		chromedp.SetValue(chromedp.CSS("#new-app-tier"), "business"),
		chromedp.Click(chromedp.CSS("#create-app")),
		chromedp.WaitVisible(chromedp.CSS("#shown-secret")),
	)
	appID, apiKey, secret = text(t, ctx, "#app-id"), text(t, ctx, "#api-key"), text(t, ctx, "#shown-secret")
	if !strings.HasPrefix(appID, "app_") || !strings.HasPrefix(apiKey, "hk_") || !strings.HasPrefix(secret, "hs_") {
		t.Fatalf("app page: got id %q, api key %q, secret %q", appID, apiKey, secret)
	}
	credsFile := filepath.Join(t.TempDir(), "service-account.json")
	if err := os.WriteFile(credsFile, fcmtest.ServiceAccountJSON(t, "proj-browser", e.EmulatorURL+"/token"), 0o600); err != nil {
		t.Fatal(err)
	}
	step(t, ctx, "upload FCM credentials",
		chromedp.Navigate(base+"/apps/"+appID),
		chromedp.SetUploadFiles(chromedp.CSS("#fcm-file"), []string{credsFile}),
		chromedp.Click(chromedp.CSS("#fcm-upload")),
		chromedp.WaitVisible(chromedp.CSS("#fcm-remove")), // shown once credentials are stored
	)
	if status := text(t, ctx, "#fcm-status"); !strings.Contains(status, "is stored") {
		t.Fatalf("FCM status: got %q, want stored", status)
	}
	return appID, apiKey, secret
}

func TestDashboardBrowser(t *testing.T) {
	t.Parallel()
	ctx := headless(t, 45*time.Second)
	e := start(t)
	base := e.Admin.URL
	appID, apiKey, secret := browserNewApp(t, ctx, e, "Browser app")

	// The harness runs on the real clock: two hours ahead is far from both
	// the 60 s lead and the 5-minute edit deadline.
	at := time.Now().In(seoul).Add(2 * time.Hour).Format("2006-01-02T15:04")
	res, err := client.New(e.API.URL, apiKey, secret, nil).PushUsers(context.Background(), client.PushUsersRequest{
		UserIDs: []any{"u1"}, Title: "Original title", Content: "Hello", Options: &client.Options{ScheduleTime: at},
	})
	if err != nil {
		t.Fatalf("schedule a push: %v", err)
	}
	id := res.PushID

	step(t, ctx, "edit the scheduled push",
		chromedp.Navigate(base+"/apps/"+appID+"/scheduled"),
		chromedp.Click(chromedp.CSS("#edit-"+id)),
		chromedp.WaitVisible(chromedp.CSS("#title")),
		chromedp.SetValue(chromedp.CSS("#title"), "Edited in the browser"),
		chromedp.Click(chromedp.CSS("#save")),
		chromedp.WaitVisible(chromedp.CSS("#row-"+id)),
	)
	if title, notice := text(t, ctx, "#row-"+id+" .title"), text(t, ctx, "#notice"); title != "Edited in the browser" || !strings.Contains(notice, "updated") {
		t.Fatalf("after the edit: got title %q, notice %q", title, notice)
	}

	step(t, ctx, "cancel the scheduled push, confirming on the second page",
		chromedp.Click(chromedp.CSS("#cancel-"+id)),
		chromedp.WaitVisible(chromedp.CSS("#confirm-cancel")),
	)
	if c := text(t, ctx, "#consequence"); !strings.Contains(c, "0.5 Server Actions are refunded") {
		t.Fatalf("confirmation page: got %q, want the refund named", c)
	}
	if e.Push(id).Status != "scheduled" {
		t.Fatalf("before the confirmation: push no longer scheduled")
	}
	step(t, ctx, "confirm the cancellation",
		chromedp.Click(chromedp.CSS("#confirm-cancel")),
		chromedp.WaitVisible(chromedp.CSS("#notice")),
		chromedp.WaitNotPresent(chromedp.CSS("#row-"+id)),
	)
	notice := text(t, ctx, "#notice")
	if !strings.Contains(notice, "cancelled") {
		t.Fatalf("after the cancel: got notice %q", notice)
	}

	var p struct {
		Status, Title string
		Edits         []struct{ Changes map[string]string }
	}
	if code := e.AdminJSON("GET", "/admin/v1/pushes/"+id, nil, &p); code != http.StatusOK {
		t.Fatalf("get push: got %d, want 200", code)
	}
	if p.Status != "cancelled" || p.Title != "Edited in the browser" || len(p.Edits) != 1 || p.Edits[0].Changes["title"] != "Edited in the browser" {
		t.Fatalf("push through the admin API: got %+v, want cancelled with the title edit in its trail", p)
	}
	browserSignOut(t, ctx, e)
}
