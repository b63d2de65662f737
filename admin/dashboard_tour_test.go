package admin_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/heraldpush/herald/client"
)

// browserSignOut signs out with the header's button and checks that the
// session ended on the server: the old cookie, put back into the browser
// or sent by another client, lands on the login page.
func browserSignOut(t *testing.T, ctx context.Context, e *env) {
	t.Helper()
	base := e.Admin.URL
	cookies, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{base + "/"}})
	if err != nil {
		t.Fatalf("read cookies: %v", err)
	}
	var old *network.Cookie
	for _, c := range cookies.Cookies {
		if c.Name == "herald_session" {
			old = c
		}
	}
	if old == nil {
		t.Fatalf("cookies: got %d, want the session cookie", len(cookies.Cookies))
	}
	step(t, ctx, "sign out",
		chromedp.Navigate(base+"/"),
		chromedp.Click(chromedp.CSS("#sign-out")),
		chromedp.WaitVisible(chromedp.CSS("#token")),
	)
	if _, err := chromedp.Call(ctx, network.SetCookies, network.SetCookiesParams{Cookies: []*network.CookieParam{
		{Name: old.Name, Value: old.Value, URL: base + "/", HTTPOnly: true, SameSite: network.CookieSameSiteStrict},
	}}); err != nil {
		t.Fatalf("put the old cookie back: %v", err)
	}
	step(t, ctx, "visit with the old cookie", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#token")))
	req, _ := http.NewRequest(http.MethodGet, base+"/", nil)
	req.AddCookie(&http.Cookie{Name: old.Name, Value: old.Value})
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
		t.Fatalf("the old cookie after sign-out: got %d %q, want 303 to /login", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// seedHistory registers a few devices and sends pushes that end in every
// outcome: sent, suppressed by consent, unreachable, a request group of
// two, and one message per user. It waits until they are done and returns
// the id of the last, whose two sends FCM refused.
func seedHistory(t *testing.T, e *env, a testenv.App) (refused string) {
	t.Helper()
	ctx := context.Background()
	devices := map[string]string{"minji": "tok-minji-4f2a9c1e", "jun": "tok-jun-8b3d7e20", "seoyeon": "tok-seoyeon-1c9e5a77",
		"hyun": "tok-hyun-6d0b2f93", "dahye": "unregistered-dahye-0a4c", "tae": "invalid-tae-73e1"}
	for user, token := range devices {
		e.Device(a, "device-"+user, token, "android", "1.6.0", user)
	}
	yes := true
	for _, user := range []string{"minji", "jun"} {
		if _, err := a.Client.SetConsent(ctx, "device-"+user, &yes, &yes); err != nil {
			t.Fatalf("consent of %s: %v", user, err)
		}
	}
	var ids []string
	send := func(res client.PushResult, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("seed push: %v", err)
		}
		ids = append(ids, res.PushID)
	}
	send(a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"minji", "jun", "seoyeon", "ghost"}, Title: "Your order has shipped", Content: "It arrives tomorrow."}))
	for _, users := range [][]any{{"minji", "jun", "seoyeon", "hyun"}, {"dahye", "tae"}} {
		send(a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: users, Title: "(광고) Spring sale: 20% off", Content: "This weekend only.",
			Options: &client.Options{RequestGroupID: "spring-sale"}}))
	}
	send(a.Client.PushMessages(ctx, client.PushMessagesRequest{Messages: []client.Message{
		{UserID: "minji", Title: "Minji, your table is ready", Content: "Table 4, by the window."},
		{UserID: "jun", Title: "Jun, your parcel is here", Content: "Locker 12, code 4821."}}}))
	send(a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"dahye", "tae"}, Title: "Your coupon expires today", Content: "Use it before midnight."}))
	for _, id := range ids {
		e.WaitFinal(id, 20*time.Second)
	}
	return ids[len(ids)-1]
}

// pageFits reports whether the page needs no horizontal scrolling at the
// current viewport width.
func pageFits(t *testing.T, ctx context.Context) (scrollWidth, innerWidth int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	w, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, window.innerWidth]`))
	if err != nil || len(w) != 2 {
		t.Fatalf("measure the page: %v", err)
	}
	return w[0], w[1]
}

// screenshot captures the whole page and, when HERALD_SCREENSHOTS_DIR is
// set, writes it there as name (go test -run TestDashboardTour with
// HERALD_SCREENSHOTS_DIR=$PWD/docs refreshes the README's pictures).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	// Twice a step's bound: a full-page capture is the heaviest thing a
	// browser test asks, and with the suite's other browsers and servers
	// on two cores one took more than 15 s in CI.
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot %s: got %d bytes, %v; want a PNG", name, len(png), err)
	}
	if dir := os.Getenv("HERALD_SCREENSHOTS_DIR"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDashboardTour drives the dashboard over a seeded app: the history
// and its grouped view, the usage chart, a test push that reaches the
// emulator, the copy buttons, the overview, the users page, a composed push
// confirmed and delivered, and every page at 390 px; it takes the README's
// screenshots on the way (TestDashboardCharts takes those of the overview
// and of a push).
func TestDashboardTour(t *testing.T) {
	t.Parallel()
	ctx := headless(t, 150*time.Second)
	e := start(t)
	base := e.Admin.URL
	step(t, ctx, "desktop window", chromedp.EmulateViewport(1280, 900))
	appID, apiKey, secret := browserNewApp(t, ctx, e, "Coffee Shop")
	a := testenv.App{ID: appID, APIKey: apiKey, SecretKey: secret, Client: client.New(e.API.URL, apiKey, secret, nil)}
	// The footer the seeded ads need (art. 50(4)).
	e.PatchApp(a, map[string]any{"adSender": map[string]any{"name": testenv.AdSender, "contact": testenv.AdContact}, "adOptOut": testenv.AdOptOut})
	refused := seedHistory(t, e, a)
	appPath := base + "/apps/" + appID

	step(t, ctx, "a push FCM refused", chromedp.Navigate(appPath+"/pushes/"+refused), chromedp.WaitVisible(chromedp.CSS("#failures")))
	if f := text(t, ctx, "#failures"); !strings.Contains(f, "The app was uninstalled from the device") || !strings.Contains(f, "…hye-0a4c") ||
		!strings.Contains(f, "FCM refused the token or the message as invalid") {
		t.Fatalf("failed sends: got %q, want plain words and tokens marked as shortened", f)
	}

	step(t, ctx, "send a test push from the app page",
		chromedp.Navigate(appPath),
		chromedp.SetValue(chromedp.CSS("#test-user"), "minji"),
		chromedp.SetValue(chromedp.CSS("#test-title"), "Test from the dashboard"),
		chromedp.SetValue(chromedp.CSS("#test-content"), "Is this reaching Minji?"),
		chromedp.Click(chromedp.CSS("#send-test-push")),
		chromedp.WaitVisible(chromedp.CSS("#push-id")),
	)
	testID := text(t, ctx, "#push-id")
	if p := e.WaitFinal(testID, 20*time.Second); p.Status != "done" || p.Counts.Sent != 1 || p.ServerActions != 0 {
		t.Fatalf("test push: got %+v, want done, 1 sent, not charged", p)
	}
	if got := e.SentTo(testID); got["tok-minji-4f2a9c1e"] != 1 {
		t.Fatalf("emulator: got %v for the test push, want one message to Minji's token", got)
	}

	reconfirmed := browserReconfirmation(t, e, a)
	step(t, ctx, "history", chromedp.Navigate(appPath+"/pushes"), chromedp.WaitVisible(chromedp.CSS("#pushes")))
	if title := text(t, ctx, "#push-"+reconfirmed+" td[data-label=Title]"); !strings.HasPrefix(title, "[Coffee Shop] 광고성 정보 수신 동의 확인 안내") {
		t.Errorf("history: the re-confirmation push is listed as %q, want its title as the devices got it", title)
	}
	wantFits(t, ctx, "history")
	screenshot(t, ctx, "dashboard-history.png")
	step(t, ctx, "copy a push ID", chromedp.Click(chromedp.CSS("#pushes button.copy")),
		chromedp.WaitVisible(chromedp.CSS("#pushes button.copy.copied")))

	step(t, ctx, "open the request group", chromedp.Click(chromedp.CSS("#pushes a.group")), chromedp.WaitVisible(chromedp.CSS("#group-counts")))
	var group struct {
		PushIDs       []string
		ServerActions float64
		Counts        struct{ Sent, SuppressedConsent int }
	}
	e.AdminJSON("GET", "/admin/v1/apps/"+appID+"/push-groups/spring-sale", nil, &group)
	if got, want := text(t, ctx, "#group-pushes")+"/"+text(t, ctx, "#group-sent")+"/"+text(t, ctx, "#group-actions"),
		fmt.Sprintf("%d/%d/%v", len(group.PushIDs), group.Counts.Sent, group.ServerActions); got != want || len(group.PushIDs) != 2 {
		t.Fatalf("grouped view: got pushes/sent/actions %s, want %s (the admin API's sums of 2 pushes)", got, want)
	}
	if counts := text(t, ctx, "#group-counts"); !strings.Contains(counts, "Deferred to 08:00") {
		t.Errorf("grouped view: got %q, want a row Deferred to 08:00", counts)
	}
	wantFits(t, ctx, "group page")
	screenshot(t, ctx, "dashboard-group.png")

	step(t, ctx, "an ad's page", chromedp.Navigate(appPath+"/pushes/"+group.PushIDs[0]), chromedp.WaitVisible(chromedp.CSS("#ad-footer")))
	ad := definitions(t, ctx, "section.card dl")
	for label, want := range map[string]string{"Status": "done", "Title": "(광고) Spring sale: 20% off", "Content": "This weekend only.",
		"Badge": "no", "Server Actions": fmt.Sprint(e.Push(group.PushIDs[0]).ServerActions)} {
		if ad[label] != want {
			t.Errorf("an ad's page: %q shows %q, want %q (all: %v)", label, ad[label], want, ad)
		}
	}
	if !strings.HasPrefix(ad["Ad footer"], testenv.AdSender+" "+testenv.AdContact+"\n"+testenv.AdOptOut+"\n") {
		t.Errorf("an ad's page: Ad footer shows %q, want the footer, then what it is", ad["Ad footer"])
	}

	today := time.Now().In(seoul)
	from := today.AddDate(0, 0, -13).Format(time.DateOnly)
	step(t, ctx, "usage", chromedp.Navigate(appPath+"/usage?from="+from+"&to="+today.Format(time.DateOnly)),
		chromedp.WaitVisible(chromedp.CSS("#usage-chart")))
	ctxEval, cancel := context.WithTimeout(ctx, 15*time.Second)
	bars, err := chromedp.Run(ctxEval, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#usage-chart rect")).map(r => r.getAttribute("class") + " " + r.dataset.date)`))
	cancel()
	if err != nil || len(bars) != 14 || bars[13] != "bar "+today.Format(time.DateOnly) || bars[0] != "bar zero "+from {
		t.Fatalf("usage chart: got %v (%v), want 14 bars, zero on %s, charged today", bars, err, from)
	}
	if total := text(t, ctx, "#usage-total"); total != fmt.Sprint(e.Usage(a)) {
		t.Fatalf("usage total: got %s, want the admin API's %v", total, e.Usage(a))
	}
	screenshot(t, ctx, "dashboard-usage.png")
	step(t, ctx, "app page", chromedp.Navigate(appPath), chromedp.WaitVisible(chromedp.CSS("#fcm-account")))
	if acct := text(t, ctx, "#fcm-account"); !strings.Contains(acct, "proj-browser") || !strings.Contains(acct, "iam.gserviceaccount.com") {
		t.Fatalf("FCM card: got %q, want the project and service account", acct)
	}
	screenshot(t, ctx, "dashboard-app.png")

	browserOverviewUsersCompose(t, ctx, e, a, appPath)
	step(t, ctx, "access records, verified", chromedp.Navigate(base+"/access?verify=1"), chromedp.WaitVisible(chromedp.CSS("#access-records")))
	if v := text(t, ctx, "#verdict"); !strings.Contains(v, "The chain holds") {
		t.Fatalf("access page: verdict %q, want the chain holding", v)
	}
	screenshot(t, ctx, "dashboard-access.png")
	browserNarrow(t, ctx, appPath, testID)
}

// browserReconfirmation makes a re-confirmation push of the tour's app: a
// user whose consent, imported, is two years old in ten days is sent the
// notice with the default templates. It returns the push's id.
func browserReconfirmation(t *testing.T, e *env, a testenv.App) string {
	t.Helper()
	e.PatchApp(a, map[string]any{"reconfirmation": map[string]any{"enabled": true}})
	e.Device(a, "device-hana", "tok-hana-5e81c3a0", "android", "1.6.0", "hana")
	old := time.Now().AddDate(-2, 0, 10).UTC().Truncate(time.Second)
	if code := e.AdminJSON("POST", "/admin/v1/apps/"+a.ID+"/consent-import", map[string]any{"users": []any{
		map[string]any{"userId": "hana", "marketing": true, "marketingNight": false, "at": old.Format(time.RFC3339)}}}, nil); code != http.StatusOK {
		t.Fatalf("import hana's consent: got %d, want 200", code)
	}
	// The app's daily run may come first: either makes the one push.
	if code := e.AdminJSON("POST", "/admin/v1/apps/"+a.ID+"/reconfirmation/run", nil, nil); code != http.StatusOK {
		t.Fatalf("run the re-confirmation: got %d, want 200", code)
	}
	ps := e.pushesOfKind(a, "consent-reconfirmation")
	if len(ps) != 1 {
		t.Fatalf("re-confirmation pushes: got %d, want 1", len(ps))
	}
	if p := e.WaitFinal(ps[0].PushID, 20*time.Second); p.Counts.Sent != 1 {
		t.Fatalf("re-confirmation push: got %+v, want 1 sent", p)
	}
	return ps[0].PushID
}

// browserNarrow visits every page at 390 px, the width of a small phone
// ("/../.." is the list of apps): none may need horizontal scrolling.
func browserNarrow(t *testing.T, ctx context.Context, appPath, pushID string) {
	t.Helper()
	step(t, ctx, "phone window", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	for _, p := range []string{"/../..", "", "/overview", "/users", "/compose", "/pushes", "/pushes/" + pushID, "/groups/spring-sale", "/usage", "/scheduled", "/users?userId=minji", "/consent", "/secret-key", "/../../access"} {
		step(t, ctx, "open "+p, chromedp.Navigate(appPath+p), chromedp.WaitVisible(chromedp.CSS("main")))
		if scroll, inner := pageFits(t, ctx); scroll > inner {
			t.Errorf("%s at 390 px: the page is %d px wide, want at most %d", p, scroll, inner)
		}
		if p == "/pushes" {
			screenshot(t, ctx, "dashboard-phone.png")
		}
	}
}

// pushesOfKind returns the app's pushes of one kind, newest first.
func (e *env) pushesOfKind(a testenv.App, kind string) []testenv.PushView {
	var out []testenv.PushView
	for _, p := range e.PushList(a) {
		if p.Kind == kind {
			out = append(out, p)
		}
	}
	return out
}
