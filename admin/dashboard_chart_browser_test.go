package admin_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
)

// chartCounts are the figures the charts draw, as the admin API gives
// them (a push's counts, or an overview's sums).
type chartCounts struct {
	Tokens, Sent, Received, Opened, Failed, SuppressedConsent, SuppressedNight, SuppressedCap int
}

// pushCounts reads a push's counts and when it was created from the admin
// API.
func (e *env) pushCounts(id string) (chartCounts, time.Time) {
	var p struct {
		Counts    chartCounts
		CreatedAt time.Time
	}
	if code := e.AdminJSON("GET", "/admin/v1/pushes/"+id, nil, &p); code != 200 {
		e.T.Fatalf("GET push %s: got %d, want 200", id, code)
	}
	return p.Counts, p.CreatedAt
}

// overviewCounts reads an overview's sums from the admin API.
func (e *env) overviewCounts(a testenv.App, days int) chartCounts {
	var o chartCounts
	if code := e.AdminJSON("GET", fmt.Sprintf("/admin/v1/apps/%s/overview?days=%d", a.ID, days), nil, &o); code != 200 {
		e.T.Fatalf("GET overview: got %d, want 200", code)
	}
	return o
}

// chartBuckets reads the overview chart back from the page: each bucket's
// key and its bars' values by series, in order.
func chartBuckets(t *testing.T, ctx context.Context) ([]string, []map[string]int) {
	t.Helper()
	type bucket struct {
		Key    string
		Values map[string]int
	}
	bs := evaluate[[]bucket](t, ctx, "read the chart", `Array.from(document.querySelectorAll("#overview-chart g.bucket")).map(g => ({
		Key: g.dataset.bucket,
		Values: Object.fromEntries(Array.from(g.querySelectorAll("rect[data-series]")).map(r => [r.dataset.series, Number(r.dataset.value)]))}))`)
	var keys []string
	var values []map[string]int
	for _, b := range bs {
		keys, values = append(keys, b.Key), append(values, b.Values)
	}
	return keys, values
}

// wantSums fails unless the chart's buckets add up to the API's sums.
func wantSums(t *testing.T, what string, values []map[string]int, api chartCounts) {
	t.Helper()
	var got chartCounts
	for _, v := range values {
		got.Sent, got.Received, got.Opened = got.Sent+v["sent"], got.Received+v["received"], got.Opened+v["opened"]
	}
	if got.Sent != api.Sent || got.Received != api.Received || got.Opened != api.Opened || api.Sent == 0 || api.Opened == 0 {
		t.Errorf("%s: the chart adds up to sent %d, received %d, opened %d; the admin API's overview has %d, %d, %d",
			what, got.Sent, got.Received, got.Opened, api.Sent, api.Received, api.Opened)
	}
}

// TestDashboardCharts sends pushes through the FCM emulator on three days
// of the service's clock (two days ago, yesterday, three hours ago and
// now, in Seoul), with devices reporting them received and opened through
// the SDK API, and reads the charts back from the rendered SVG: the
// overview's days (7 and 30) and hours (1) hold each push's sent,
// received and opened in the bucket it was created in (as the admin API
// gives its createdAt), and add up to the admin API's overview; an ad's funnel shows its counts as the admin API
// has them, suppressed and failed beside it. It takes the README's
// pictures of the overview and of a push.
func TestDashboardCharts(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	now := time.Now()
	clk.Run(now.Add(-48 * time.Hour))
	e := start(t, testenv.Clocked(clk))
	a := e.NewApp(map[string]any{"name": "Coffee Shop", "tier": "business", "appUserEnabled": true, "timeZone": "Asia/Seoul"})
	ctx := context.Background()
	tokens := map[string]string{"minji": "tok-minji-4f2a9c1e", "jun": "tok-jun-8b3d7e20", "seoyeon": "tok-seoyeon-1c9e5a77",
		"hyun": "tok-hyun-6d0b2f93", "dahye": "unregistered-dahye-0a4c", "tae": "invalid-tae-73e1"}
	yes := true
	for user, token := range tokens {
		e.Device(a, "device-"+user, token, "android", "1.6.0", user)
		if user != "seoyeon" {
			if _, err := a.Client.SetConsent(ctx, "device-"+user, &yes, &yes); err != nil {
				t.Fatalf("consent of %s: %v", user, err)
			}
		}
	}
	push := func(title string, users ...any) string {
		t.Helper()
		res, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: users, Title: title, Content: "See the app."})
		if err != nil {
			t.Fatalf("push %q: %v", title, err)
		}
		e.WaitFinal(res.PushID, 20*time.Second)
		return res.PushID
	}
	report := func(user, id string, types ...string) {
		t.Helper()
		var evs []client.Event
		for _, typ := range types {
			evs = append(evs, client.Event{PushID: id, Type: typ})
		}
		if res, err := a.Client.ReportEvents(ctx, "device-"+user, evs); err != nil || res.Accepted != len(types) {
			t.Fatalf("%s reports %v of %s: got %+v, %v; want all accepted", user, types, id, res, err)
		}
	}
	shipped := push("Your order has shipped", "minji", "jun", "seoyeon", "ghost")
	report("minji", shipped, "received", "opened")
	report("jun", shipped, "received")
	report("seoyeon", shipped, "received", "opened")
	clk.Run(now.Add(-24 * time.Hour))
	stamp := push("Your loyalty stamp is ready", "minji", "jun")
	report("jun", stamp, "opened")
	clk.Run(now.Add(-3 * time.Hour))
	sale := push("(광고) Spring sale: 20% off", "minji", "jun", "seoyeon", "hyun", "dahye", "tae")
	report("minji", sale, "received", "opened")
	report("hyun", sale, "received")
	clk.Run(now)
	table := push("Minji, your table is ready", "minji")
	report("minji", table, "received")
	// The pages' windows end at one instant, after every push.
	end := clk.Now()
	clk.Freeze(end)

	counts, created := map[string]chartCounts{}, map[string]time.Time{}
	for _, id := range []string{shipped, stamp, sale, table} {
		counts[id], created[id] = e.pushCounts(id)
	}
	if c := counts[sale]; c.Tokens != 6 || c.Sent != 3 || c.Received != 2 || c.Opened != 1 || c.SuppressedConsent != 1 || c.Failed != 2 {
		t.Fatalf("the sale: got %+v, want 6 targeted, 3 sent, 2 received, 1 opened, 1 suppressed, 2 failed", c)
	}

	bctx := headless(t, 90*time.Second)
	step(t, bctx, "desktop window", chromedp.EmulateViewport(1280, 900))
	appPath := e.Admin.URL + "/apps/" + a.ID
	step(t, bctx, "sign in", chromedp.Navigate(e.Admin.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), testenv.AdminToken), chromedp.Click(chromedp.CSS("#sign-in")),
		chromedp.WaitVisible(chromedp.CSS("#new-app")))

	for _, days := range []int{7, 30} {
		step(t, bctx, fmt.Sprintf("overview of %d days", days), chromedp.Navigate(fmt.Sprintf("%s/overview?days=%d", appPath, days)),
			chromedp.WaitVisible(chromedp.CSS("#overview-chart")))
		keys, values := chartBuckets(t, bctx)
		if len(keys) != days+1 || keys[days] != end.In(seoul).Format(time.DateOnly) || keys[0] != end.In(seoul).AddDate(0, 0, -days).Format(time.DateOnly) {
			t.Fatalf("%d days: got buckets %v, want the %d days from %d days ago to today in Seoul", days, keys, days+1, days)
		}
		wantSums(t, fmt.Sprintf("%d days", days), values, e.overviewCounts(a, days))
		byDay := map[string]chartCounts{}
		for id, at := range created {
			day, c := at.In(seoul).Format(time.DateOnly), byDay[at.In(seoul).Format(time.DateOnly)]
			c.Sent, c.Received, c.Opened = c.Sent+counts[id].Sent, c.Received+counts[id].Received, c.Opened+counts[id].Opened
			byDay[day] = c
		}
		for i, key := range keys {
			want := byDay[key]
			if got := values[i]; got["sent"] != want.Sent || got["received"] != want.Received || got["opened"] != want.Opened {
				t.Errorf("%d days, %s: got %v, want sent %d, received %d, opened %d (the pushes created that day)", days, key, got, want.Sent, want.Received, want.Opened)
			}
		}
		if days == 7 {
			title := evaluate[string](t, bctx, "a bar's title", `document.querySelector("#overview-chart g.bucket:last-of-type rect[data-series=sent] title").textContent`)
			want := fmt.Sprintf("%s: %d sent", end.In(seoul).Format("Jan 2"), byDay[end.In(seoul).Format(time.DateOnly)].Sent)
			if title != want {
				t.Errorf("today's sent bar: title %q, want %q", title, want)
			}
			wantFits(t, bctx, "overview")
			screenshot(t, bctx, "dashboard-overview.png")
		}
	}

	step(t, bctx, "overview of a day", chromedp.Navigate(appPath+"/overview?days=1"), chromedp.WaitVisible(chromedp.CSS("#overview-chart")))
	keys, values := chartBuckets(t, bctx)
	if len(keys) != 25 {
		t.Fatalf("a day: got %d buckets %v, want one per hour the last 24 hours touch", len(keys), keys)
	}
	wantSums(t, "a day", values, e.overviewCounts(a, 1))
	for _, id := range []string{sale, table} {
		hour := created[id].In(seoul).Truncate(time.Hour).Format(time.RFC3339)
		i := slices.Index(keys, hour)
		if i < 0 {
			t.Fatalf("a day: no bucket %s in %v", hour, keys)
		}
		got := values[i]
		if want := counts[id]; got["sent"] != want.Sent || got["received"] != want.Received || got["opened"] != want.Opened {
			t.Errorf("a day, %s: got %v, want the push's sent %d, received %d, opened %d", hour, got, want.Sent, want.Received, want.Opened)
		}
	}

	step(t, bctx, "the sale's page", chromedp.Navigate(appPath+"/pushes/"+sale), chromedp.WaitVisible(chromedp.CSS("#push-funnel")))
	type row struct {
		Step   string
		Value  int
		Figure string
	}
	rows := evaluate[[]row](t, bctx, "read the funnel", `Array.from(document.querySelectorAll(".funnels g.step")).map(g => ({
		Step: g.dataset.step, Value: Number(g.dataset.value), Figure: g.querySelector("text.figure").textContent}))`)
	c := counts[sale]
	want := []row{{"targeted", c.Tokens, "6"}, {"sent", c.Sent, "3 (50% of targeted)"}, {"received", c.Received, "2 (67% of sent)"},
		{"opened", c.Opened, "1 (50% of received)"}, {"suppressed-consent", c.SuppressedConsent, "1 (17% of targeted)"},
		{"suppressed-night", c.SuppressedNight, "0 (0% of targeted)"}, {"suppressed-cap", c.SuppressedCap, "0 (0% of targeted)"},
		{"failed", c.Failed, "2 (33% of targeted)"}}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("the sale's funnel: got %v, want %v (the admin API's counts)", rows, want)
	}
	wantFits(t, bctx, "push page")
	screenshot(t, bctx, "dashboard-push.png")
}
