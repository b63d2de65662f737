package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/client"
)

// dashApp is an app made through the dashboard (with FCM credentials)
// and a Server API client for it.
type dashApp struct {
	path   string
	app    herald.App
	c      *client.Client
	secret string
}

func newDashApp(t *testing.T, e *dashEnv, b *browser) dashApp {
	t.Helper()
	appPath, _, _ := withScheduledApp(t, e, b)
	a, _ := e.db.App(context.Background(), strings.TrimPrefix(appPath, "/apps/"))
	b.submit(appPath+"/secret-key", appPath+"/secret-key", url.Values{"confirmed": {"yes"}})
	_, body := b.get(appPath)
	secret := secretShown.FindStringSubmatch(body)[1]
	return dashApp{path: appPath, app: a, c: client.New(e.public.URL, a.APIKey, secret, nil), secret: secret}
}

func wantIn(t *testing.T, what, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s: want %q in\n%s", what, w, body)
		}
	}
}

// TestDashboardConfirmations: each destructive action asks first; a post
// without the confirmation changes nothing and leads to the question.
func TestDashboardConfirmations(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	appPath, first, _ := withScheduledApp(t, e, b)
	b.submit(appPath, appPath+"/webhook", url.Values{"url": {"https://hooks.example.com/herald"}})
	if _, page := b.get(appPath); !strings.Contains(page, "Unreachable users and consent changes are reported to") ||
		!strings.Contains(page, "consent.changed") {
		t.Errorf("the webhook card does not say consent changes are posted too")
	}
	before, _ := e.db.App(context.Background(), strings.TrimPrefix(appPath, "/apps/"))
	actions := []struct {
		name, path, want string
		done             func(herald.App) bool
	}{
		{"Reissue", appPath + "/secret-key", "The current one stops working at once", func(a herald.App) bool { return string(a.SecretHash) != string(before.SecretHash) }},
		{"RemoveFCM", appPath + "/fcm-credentials/delete", "404 ERR-AB-PSS-92", func(a herald.App) bool { return len(a.FCMCredentials) == 0 }},
		{"RemoveWebhook", appPath + "/webhook/delete", "https://hooks.example.com/herald", func(a herald.App) bool { return a.WebhookURL == "" }},
		{"Cancel", appPath + "/scheduled/" + first + "/cancel", "0.5 Server Actions are refunded", nil},
	}
	for _, act := range actions {
		t.Run(act.name, func(t *testing.T) {
			b := b.with(t)
			token := b.csrf(appPath)
			resp, _ := b.post(act.path, url.Values{"csrf": {token}})
			if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != act.path {
				t.Fatalf("unconfirmed POST: got %d to %q, want 303 to the confirmation page", resp.StatusCode, resp.Header.Get("Location"))
			}
			a, _ := e.db.App(context.Background(), before.ID)
			p, _ := e.db.Push(context.Background(), first)
			if act.done != nil && act.done(a) || act.done == nil && p.Status != herald.StatusScheduled {
				t.Fatalf("unconfirmed POST changed something")
			}
			resp, body := b.get(act.path)
			wantStatus(t, resp, body, http.StatusOK)
			wantIn(t, "confirmation page", body, act.want, `name="confirmed" value="yes"`, `id="keep"`)
			b.submit(act.path, act.path, url.Values{"confirmed": {"yes"}})
			a, _ = e.db.App(context.Background(), before.ID)
			p, _ = e.db.Push(context.Background(), first)
			if act.done != nil && !act.done(a) || act.done == nil && p.Status != herald.StatusCancelled {
				t.Fatalf("confirmed POST: the action was not taken")
			}
		})
	}
	// A cancelled push cannot be cancelled again: the page says why.
	_, body := b.get(appPath + "/scheduled/" + first + "/cancel")
	wantIn(t, "cancel page of a cancelled push", body, `id="blocked"`)
	if strings.Contains(body, `id="confirm-cancel"`) {
		t.Errorf("cancel page of a cancelled push: got the confirm button, want none")
	}
	_, body = b.get(appPath + "/pushes/" + first)
	wantIn(t, "cancelled push", body, "0.5 charged when accepted, refunded when it was cancelled: net 0")
	_, body = b.get(appPath + "/scheduled/" + first)
	wantIn(t, "edit page of a cancelled push", body, `<fieldset disabled>`, `id="locked"`)
}

// TestDashboardAppPage: the FCM card names the project and the service
// account; every setting has its one-line explanation.
func TestDashboardAppPage(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	appPath, _, _ := withScheduledApp(t, e, b)
	_, body := b.get(appPath)
	wantIn(t, "app page", body, "<code>herald-test</code>", "push-sender@herald-test.iam.gserviceaccount.com",
		"While off, the Server API refuses this app's pushes", "night window (21:00–08:00)", "business and enterprise open the app-user endpoints",
		`id="test-push"`, `id="fcm-remove"`, `href="`+appPath+`/secret-key"`)
}

// TestDashboardTestPush: the app page's test push is accepted for one
// user, free, and its page is shown.
func TestDashboardTestPush(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	appPath, _, _ := withScheduledApp(t, e, b)
	e.register(t, appPath, "d1", "dash-token-u1", "u1")
	to := b.submit(appPath, appPath+"/test-push", url.Values{"userId": {"u1"}, "title": {"Test"}, "content": {"From the dashboard"}})
	if !strings.HasPrefix(to, appPath+"/pushes/push_") {
		t.Fatalf("test push: got redirect to %q, want the push page", to)
	}
	_, body := b.get(to)
	wantIn(t, "push page", body, "Test push sent to user u1, not charged", "From the dashboard")
	p, err := e.db.Push(context.Background(), strings.TrimPrefix(to, appPath+"/pushes/"))
	if err != nil || p.ServerActionsHalf != 0 || p.Kind != herald.KindUsers || p.RequestedUsers != 1 {
		t.Fatalf("test push: got %+v %v, want a free users push to one user", p, err)
	}
	resp, body := b.post(appPath+"/test-push", url.Values{"csrf": {b.csrf(appPath)}, "userId": {""}, "title": {"Kept"}, "content": {""}})
	wantStatus(t, resp, body, http.StatusBadRequest)
	wantIn(t, "refused test push", body, "<code>userId</code> is required", "<code>content</code> must be a non-empty string", `value="Kept"`)
	resp, body = b.post(appPath+"/test-push", url.Values{"csrf": {b.csrf(appPath)}, "userId": {"u-nobody"}, "title": {"Kept"}, "content": {"c"}})
	wantStatus(t, resp, body, http.StatusNotFound)
	wantIn(t, "test push to a user without a device", body, "No device to send to.", "ERR-AB-VAL-02",
		"<code>userId</code> no user with this ID was ever registered in this app", `value="u-nobody"`)
}

// TestDashboardHistory: the history shows the outcome columns, a request
// group opens its grouped view with summed counts, and a /messages push
// shows each user's message.
func TestDashboardHistory(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	a := newDashApp(t, e, b)
	ctx := context.Background()
	for _, users := range [][]any{{"u1", "u2"}, {"u3"}} {
		if _, err := a.c.PushUsers(ctx, client.PushUsersRequest{UserIDs: users, Title: "Grouped", Content: "c", Options: &client.Options{RequestGroupID: "spring-sale"}}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := a.c.PushMessages(ctx, client.PushMessagesRequest{Messages: []client.Message{
		{UserID: "ann", Title: "Hello Ann", Content: "Your parcel is here"}, {UserID: "bo", Title: "Hello Bo", Content: "Your table is ready"}}})
	if err != nil {
		t.Fatal(err)
	}
	_, body := b.get(a.path + "/pushes")
	wantIn(t, "history", body, ">Sent<", ">Failed<", ">consent<", ">night<", ">Unreachable<", `href="`+a.path+`/groups/spring-sale"`, "one message per user", `class="copy"`)
	if regexp.MustCompile(`<code[^>]*>push_[0-9A-Za-z]{20,}</code>`).MatchString(body) {
		t.Errorf("history: got a push ID shown whole, want it shortened")
	}
	resp, body := b.get(a.path + "/groups/spring-sale")
	wantStatus(t, resp, body, http.StatusOK)
	wantIn(t, "grouped view", body, `id="group-pushes">2<`, `id="group-actions">1.5<`, "<th>Requested users</th><td class=\"num\">3</td>")
	if resp, _ := b.get(a.path + "/groups/no-such-group"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown group: got %d, want 404", resp.StatusCode)
	}
	_, body = b.get(a.path + "/pushes/" + res.PushID)
	wantIn(t, "messages push", body, `id="messages"`, "Hello Ann", "Your parcel is here", "Hello Bo", "Your table is ready")
}

// TestDashboardUsage: every day of the range is a bar and a row, zeros
// included, with the range's total; an invalid range shows only its error.
func TestDashboardUsage(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	appPath, _, _ := withScheduledApp(t, e, b) // two pushes of 0.5 on 2026-12-01
	_, body := b.get(appPath + "/usage?from=2026-11-25&to=2026-12-03")
	if n := strings.Count(body, `<rect class="bar`); n != 9 {
		t.Errorf("chart: got %d bars, want 9 (one per day)", n)
	}
	if n := strings.Count(body, `<tr class="day">`); n != 9 {
		t.Errorf("table: got %d days, want 9", n)
	}
	wantIn(t, "usage", body, `id="usage-total">1<`, `data-date="2026-11-25"`, `<rect class="bar zero" data-date="2026-11-30"`,
		`<rect class="bar" data-date="2026-12-01"`, `<td class="when">2026-12-02</td><td class="num">0</td>`)
	for _, bad := range []string{"?from=2026-12-02&to=2026-12-01", "?from=yesterday", "?from=2025-01-01&to=2026-12-01"} {
		resp, body := b.get(appPath + "/usage" + bad)
		wantStatus(t, resp, body, http.StatusBadRequest)
		if strings.Contains(body, "usage-total") || strings.Contains(body, "<svg") || !strings.Contains(body, `id="problem"`) {
			t.Errorf("usage%s: got %s, want only the error", bad, body)
		}
	}
}

// TestDashboardEditTrail: the edit trail shows old → new values, a send
// time in the app's zone.
func TestDashboardEditTrail(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	appPath, first, _ := withScheduledApp(t, e, b)
	editPath := appPath + "/scheduled/" + first
	b.submit(editPath, editPath, url.Values{"title": {"Renamed"}, "content": {"c"}, "scheduleTime": {"2026-12-01T15:30"}})
	_, body := b.get(appPath + "/pushes/" + first)
	wantIn(t, "edit trail", body, "<code>title</code>: <del>First</del> → <ins>Renamed</ins>",
		"<code>scheduledAt</code>: <del>2026-12-01 14:00:00 KST</del> → <ins>2026-12-01 15:30:00 KST</ins>")
	e.clock.Set(time.Date(2026, 12, 1, 15, 26, 0, 0, seoul))
	_, body = b.get(editPath)
	wantIn(t, "locked edit page", body, "<fieldset disabled>")
	if strings.Contains(body, `id="cancel"`) {
		t.Errorf("locked edit page: got the cancel button, want none")
	}
}
