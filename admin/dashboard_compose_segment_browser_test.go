package admin_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
)

// TestDashboardComposeSegmentBrowser: in Chromium, the compose page's
// filter builder writes the filter of its rows, the live count follows
// each change, a filter it cannot show stays JSON, and the push composed
// from the rows is reviewed, sent and reaches exactly the selected
// devices at the FCM emulator. It takes docs/dashboard-compose-segment.png.
func TestDashboardComposeSegmentBrowser(t *testing.T) {
	t.Parallel()
	ctx := headless(t, 90*time.Second)
	e := start(t)
	step(t, ctx, "desktop window", chromedp.EmulateViewport(1280, 900))
	appID, apiKey, secret := browserNewApp(t, ctx, e, "Bakery")
	a := testenv.App{ID: appID, APIKey: apiKey, SecretKey: secret, Client: client.New(e.API.URL, apiKey, secret, nil)}
	users := map[string]struct{ platform, plan string }{
		"minji": {"android", "gold"}, "jun": {"ios", "gold"}, "seoyeon": {"android", "silver"}, "hyun": {"android", ""}}
	for user, u := range users {
		e.Device(a, "device-"+user, "tok-"+user, u.platform, "1.6.0", user)
		if u.plan != "" {
			if code := e.AdminJSON("PUT", "/admin/v1/apps/"+appID+"/users/"+user+"/tags", map[string]any{"tags": map[string]any{"plan": u.plan, "visits": len(user)}}, nil); code != http.StatusOK {
				t.Fatalf("tags of %s: got %d, want 200", user, code)
			}
		}
	}
	filter := func() string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("compose-filter").value`))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// choose picks a select's option as a person does: the change event
	// follows.
	choose := func(sel, value string) chromedp.Action[chromedp.Void] {
		return void(chromedp.Evaluate[bool](`(function(){var s=document.querySelector(` + "`" + sel + "`" + `);s.value=` + "`" + value + "`" +
			`;s.dispatchEvent(new Event("change",{bubbles:true}));return true})()`))
	}
	// retype replaces an input's text as a person does, key by key.
	retype := func(sel, text string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			if _, err := chromedp.Evaluate[bool](`(document.querySelector(`+"`"+sel+"`"+`).value = "") === ""`)(ctx, tg); err != nil {
				return chromedp.Void{}, err
			}
			return chromedp.SendKeys(chromedp.CSS(sel), text)(ctx, tg)
		}
	}
	// counted waits for the live count to begin with want.
	counted := func(want string) chromedp.Action[chromedp.Void] {
		return void(chromedp.Poll[bool](`document.getElementById("filter-count").textContent.indexOf(` + "`" + want + "`" + `) === 0`))
	}

	step(t, ctx, "compose to a segment",
		chromedp.Navigate(e.Admin.URL+"/apps/"+appID+"/compose"),
		chromedp.Click(chromedp.CSS("#target-segment")),
		chromedp.WaitVisible(chromedp.CSS("#filter-builder .builder-row")),
		chromedp.SendKeys(chromedp.CSS(".builder-row:nth-child(1) .tag-name"), "plan"),
		chromedp.SendKeys(chromedp.CSS(".builder-row:nth-child(1) .value"), "gold"),
		counted("Selects 2 users (2 devices) now."),
	)
	if got := filter(); got != `{"tag":"plan","eq":"gold"}` {
		t.Fatalf("one row: got filter %s", got)
	}
	step(t, ctx, "a second condition",
		chromedp.Click(chromedp.CSS("#add-condition")),
		choose(".builder-row:nth-child(2) .subject", "platform"),
		chromedp.SendKeys(chromedp.CSS(".builder-row:nth-child(2) .value"), "android"),
		counted("Selects 1 user (1 device) now."),
		choose("#filter-builder .match", "or"),
		counted("Selects 4 users (4 devices) now."),
		choose("#filter-builder .match", "and"),
		choose(".builder-row:nth-child(2) .op", "in"),
		chromedp.SendKeys(chromedp.CSS(".builder-row:nth-child(2) .value"), ", ios"),
		counted("Selects 2 users (2 devices) now."),
	)
	if got := filter(); got != `{"and":[{"tag":"plan","eq":"gold"},{"field":"platform","in":["android","ios"]}]}` {
		t.Fatalf("two rows: got filter %s", got)
	}
	step(t, ctx, "a tag name the server refuses",
		chromedp.SendKeys(chromedp.CSS(".builder-row:nth-child(1) .tag-name"), " x"),
		counted("Incorrect request."),
	)
	if msg := text(t, ctx, "#filter-count"); !strings.Contains(msg, "filter.and[0].tag") {
		t.Fatalf("refused filter: the count says %q, want the node named", msg)
	}
	step(t, ctx, "a tag of numbers",
		retype(".builder-row:nth-child(1) .tag-name", "visits"),
		choose(".builder-row:nth-child(1) .kind", "number"),
		choose(".builder-row:nth-child(1) .op", "gt"),
		retype(".builder-row:nth-child(1) .value", "4"),
		counted("Selects 2 users (2 devices) now."), // minji (5 visits) and seoyeon (7); jun has 3, hyun no tags
	)
	if got := filter(); got != `{"and":[{"tag":"visits","gt":4},{"field":"platform","in":["android","ios"]}]}` {
		t.Fatalf("a number: got filter %s", got)
	}
	step(t, ctx, "nested JSON stays JSON",
		retype("#compose-filter", `{"not": {"or": [{"tag": "plan", "eq": "silver"}, {"tag": "plan", "exists": false}]}}`),
		chromedp.WaitVisible(chromedp.CSS("#builder-note")),
		counted("Selects 2 users (2 devices) now."),
	)
	step(t, ctx, "back to rows",
		retype("#compose-filter", `{"and":[{"tag":"plan","eq":"gold"},{"field":"platform","in":["android","ios"]}]}`),
		chromedp.WaitNotVisible(chromedp.CSS("#builder-note")),
		chromedp.WaitVisible(chromedp.CSS(".builder-row:nth-child(2) .value")),
		counted("Selects 2 users (2 devices) now."),
		chromedp.SetValue(chromedp.CSS("#compose-title"), "Fresh croissants at 7"),
		chromedp.SetValue(chromedp.CSS("#compose-content"), "For our gold members, before anyone else."),
	)
	if v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".builder-row:nth-child(2) .value").value`)); err != nil || v != "android, ios" {
		t.Fatalf("rows read back from the JSON: second value %q (%v), want \"android, ios\"", v, err)
	}
	wantFits(t, ctx, "compose to a segment")
	screenshot(t, ctx, "dashboard-compose-segment.png")
	step(t, ctx, "review", chromedp.Click(chromedp.CSS("#compose-review")), chromedp.WaitVisible(chromedp.CSS("#confirm-send")))
	if users, devices, cost := text(t, ctx, "#review-users"), text(t, ctx, "#review-devices"), text(t, ctx, "#review-actions"); users != "2" || devices != "2" || cost != "1" {
		t.Fatalf("review: got %s users, %s devices, %s Server Actions; want 2, 2, 1", users, devices, cost)
	}
	step(t, ctx, "send", chromedp.Click(chromedp.CSS("#confirm-send")), chromedp.WaitVisible(chromedp.CSS("#notice")))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	id := loc[strings.LastIndex(loc, "/")+1:]
	p := e.WaitFinal(id, 20*time.Second)
	if p.Status != "done" || p.Kind != "segment" || p.Counts.Sent != 2 || p.ServerActions != 1 {
		t.Fatalf("segment push: got %+v, want done, 2 sent, 1 Server Action", p)
	}
	if sent := e.SentTo(id); sent["tok-minji"] != 1 || sent["tok-jun"] != 1 || len(sent) != 2 {
		t.Fatalf("emulator: got %v, want one message each to minji's and jun's tokens", sent)
	}
}

// void runs an action for its effect alone.
func void[T any](a chromedp.Action[T]) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := a(ctx, tg)
		return chromedp.Void{}, err
	}
}
