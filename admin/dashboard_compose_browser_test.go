package admin_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"

	"github.com/chromedp/chromedp"
)

// browserOverviewUsersCompose drives the overview, the users page and the
// compose page over the app of seedHistory: the overview's figures are the
// admin API's; the users page searches and opens a user; a push composed
// to two users is reviewed (its users and cost), confirmed and reaches
// both devices at the FCM emulator. It takes the screenshots of the users
// and compose pages on the way.
func browserOverviewUsersCompose(t *testing.T, ctx context.Context, e *env, a testenv.App, appPath string) {
	t.Helper()
	step(t, ctx, "overview from the apps list", chromedp.Navigate(e.Admin.URL+"/"),
		chromedp.Click(chromedp.CSS(`a[href="/apps/`+a.ID+`/overview"]`)), chromedp.WaitVisible(chromedp.CSS("#overview")))
	var api struct {
		Pushes, RequestedUsers, Sent, Failed, Unreachable int
		ServerActions                                     float64
	}
	if code := e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/overview?days=7", nil, &api); code != 200 {
		t.Fatalf("GET overview: got %d, want 200", code)
	}
	got := strings.Join([]string{text(t, ctx, "#ov-pushes"), text(t, ctx, "#ov-users"), text(t, ctx, "#ov-sent"),
		text(t, ctx, "#ov-failed"), text(t, ctx, "#ov-unreachable"), text(t, ctx, "#ov-actions")}, "/")
	want := fmt.Sprintf("%d/%d/%d/%d/%d/%v", api.Pushes, api.RequestedUsers, api.Sent, api.Failed, api.Unreachable, api.ServerActions)
	if got != want || api.Pushes < 6 || api.Sent == 0 || api.Failed == 0 || api.Unreachable == 0 {
		t.Fatalf("overview: got pushes/users/sent/failed/unreachable/actions %s, want the admin API's %s, with sends, failures and unreachable users", got, want)
	}
	if rows := text(t, ctx, "#pushes tbody"); !strings.Contains(rows, "Your coupon expires today") {
		t.Fatalf("latest pushes: got %q, want the last seeded push", rows)
	}
	wantFits(t, ctx, "overview") // its picture is TestDashboardCharts', of pushes on several days
	step(t, ctx, "overview of one day", chromedp.Click(chromedp.CSS("#days-1")), chromedp.WaitVisible(chromedp.CSS(`strong#days-1`)))

	step(t, ctx, "users", chromedp.Click(chromedp.CSS(`.app-nav a[href="/apps/`+a.ID+`/users"]`)), chromedp.WaitVisible(chromedp.CSS("#users")))
	if list := text(t, ctx, "#users tbody"); !strings.Contains(list, "minji") || !strings.Contains(list, "seoyeon") {
		t.Fatalf("users: got %q, want the seeded users", list)
	}
	screenshot(t, ctx, "dashboard-users.png")
	step(t, ctx, "search users",
		chromedp.SetValue(chromedp.CSS("#user-q"), "se"),
		chromedp.Click(chromedp.CSS("#search-users")),
		chromedp.WaitNotPresent(chromedp.CSS(`tr[data-user="minji"]`)),
		chromedp.Click(chromedp.CSS(`tr[data-user="seoyeon"] a.user`)),
		chromedp.WaitVisible(chromedp.CSS("#user-state")),
	)
	if state := text(t, ctx, "#user-state"); state != "registered" {
		t.Fatalf("seoyeon's page: got state %q, want registered", state)
	}

	step(t, ctx, "compose a push",
		chromedp.Click(chromedp.CSS(`.app-nav a[href="/apps/`+a.ID+`/compose"]`)),
		chromedp.WaitVisible(chromedp.CSS("#compose")),
	)
	wantRadiosLeft(t, ctx, "#compose")
	step(t, ctx, "fill the compose form",
		chromedp.SetValue(chromedp.CSS("#compose-users"), "minji\njun"),
		chromedp.SetValue(chromedp.CSS("#compose-title"), "Your loyalty stamp is ready"),
		chromedp.SetValue(chromedp.CSS("#compose-content"), "Show this at the counter for a free coffee."),
		chromedp.SetValue(chromedp.CSS("#compose-group"), "stamp-june"),
		chromedp.Click(chromedp.CSS("#compose-review")),
		chromedp.WaitVisible(chromedp.CSS("#confirm-send")),
	)
	if users, cost := text(t, ctx, "#review-users"), text(t, ctx, "#review-actions"); users != "2" || cost != "1" {
		t.Fatalf("review: got %s users for %s Server Actions, want 2 for 1", users, cost)
	}
	before := len(e.PushList(a))
	screenshot(t, ctx, "dashboard-compose.png")
	if after := len(e.PushList(a)); after != before {
		t.Fatalf("before the confirmation: got %d pushes, want %d", after, before)
	}
	step(t, ctx, "confirm the push", chromedp.Click(chromedp.CSS("#confirm-send")), chromedp.WaitVisible(chromedp.CSS("#notice")))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	id := loc[strings.LastIndex(loc, "/")+1:]
	p := e.WaitFinal(id, 20*time.Second)
	if p.Status != "done" || p.Kind != "users" || p.Counts.Sent != 2 || p.ServerActions != 1 || p.RequestGroupID != "stamp-june" {
		t.Fatalf("composed push: got %+v, want done, 2 sent, 1 Server Action, in group stamp-june", p)
	}
	if sent := e.SentTo(id); sent["tok-minji-4f2a9c1e"] != 1 || sent["tok-jun-8b3d7e20"] != 1 || len(sent) != 2 {
		t.Fatalf("emulator: got %v, want one message each to Minji's and Jun's tokens", sent)
	}
}
