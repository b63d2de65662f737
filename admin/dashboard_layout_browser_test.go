package admin_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"

	"github.com/chromedp/chromedp"

	"github.com/heraldpush/herald/client"
)

// evaluate runs a script in the page and decodes its value into T.
func evaluate[T any](t *testing.T, ctx context.Context, what, script string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](script))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// definitions reads the definition list sel as the page lays it out: each
// dt's label and the text of the dd on its row of the grid. A list whose
// children do not alternate dt, dd (a dd with no dt of its own shifts every
// pair after it) is reported as "<dd without a dt>" or "<dt without a dd>"
// under the label of the pair that is broken.
func definitions(t *testing.T, ctx context.Context, sel string) map[string]string {
	t.Helper()
	pairs := evaluate[[][2]string](t, ctx, "read the list "+sel, `(() => {
		const out = [];
		const kids = Array.from(document.querySelector(`+jsString(sel)+`).children);
		for (let i = 0; i < kids.length; i++) {
			const k = kids[i], next = kids[i+1];
			if (k.tagName === "DT" && next && next.tagName === "DD") {
				const top = Math.abs(k.getBoundingClientRect().top - next.getBoundingClientRect().top) < 2;
				out.push([k.innerText.trim(), top ? next.innerText.trim() : "<dd on another row>"]);
				i++;
			} else if (k.tagName === "DT") {
				out.push([k.innerText.trim(), "<dt without a dd>"]);
			} else {
				out.push([(out.length ? out[out.length-1][0] : "") + " (after)", "<dd without a dt>"]);
			}
		}
		return out;
	})()`)
	m := map[string]string{}
	for _, p := range pairs {
		if strings.HasPrefix(p[1], "<") {
			t.Errorf("list %s: %q: %s", sel, p[0], p[1])
		}
		m[p[0]] = p[1]
	}
	return m
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// wideBoxes names what is wider than the window on the current page: the
// page itself (it scrolls sideways) and each table or scrolling box whose
// content is wider than the box (part of it is cut off behind a scroll
// bar), each as "what: content px > box px".
func wideBoxes(t *testing.T, ctx context.Context) []string {
	t.Helper()
	return evaluate[[]string](t, ctx, "measure the tables", `(() => {
		const out = [];
		const d = document.documentElement;
		if (d.scrollWidth > window.innerWidth) out.push("page: " + d.scrollWidth + " > " + window.innerWidth);
		document.querySelectorAll(".scroll, table").forEach(el => {
			const name = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className ? "." + el.className.split(" ").join(".") : "");
			if (el.scrollWidth > el.clientWidth + 1) out.push(name + ": " + el.scrollWidth + " > " + el.clientWidth);
			if (el.getBoundingClientRect().right > window.innerWidth) out.push(name + " ends at " + el.getBoundingClientRect().right);
		});
		return out;
	})()`)
}

// wantFits fails unless the current page and its tables fit the window.
func wantFits(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	if wide := wideBoxes(t, ctx); len(wide) > 0 {
		t.Errorf("%s at 1280 px: wider than the window: %v", page, wide)
	}
}

// wantRadiosLeft fails unless each radio button of the form sel is a small
// box at the left of its column: where the column's text fields start.
func wantRadiosLeft(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	got := evaluate[[]string](t, ctx, "measure the radio buttons", `(() => {
		const out = [];
		const form = document.querySelector(`+jsString(sel)+`);
		const left = form.querySelector("textarea, input[type=text], input:not([type])").getBoundingClientRect().left;
		form.querySelectorAll("input[type=radio]").forEach(r => {
			const b = r.getBoundingClientRect();
			if (b.width > 30 || Math.abs(b.left - left) > 4) out.push(r.id + ": " + Math.round(b.width) + " px wide at " + Math.round(b.left - left) + " px from the column's left");
		});
		return out;
	})()`)
	if len(got) > 0 {
		t.Errorf("compose page at 1280 px: radio buttons not at the left of their column: %v", got)
	}
}

// nextNight is the first 23:00 in Seoul after now: a night shortly ahead
// of the real clock, so the session's cookie (timed by the service's
// clock) is valid for the browser too.
func nextNight() time.Time {
	now := time.Now().In(seoul)
	n := time.Date(now.Year(), now.Month(), now.Day(), 23, 0, 0, 0, seoul)
	if n.Before(now) {
		n = n.AddDate(0, 0, 1)
	}
	return n
}

// TestDashboardNightCompose composes an advertising push at night on the
// service's clock (23:00 in Seoul): the compose page offers the night
// policy, the review says it is night and shows the ad footer, the push
// is stored with nightPolicy "defer" and defers the device without night
// consent; its page lists each label with its value, and its request
// group's page counts it as deferred to 08:00; every table fits 1280 px.
func TestDashboardNightCompose(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	night := nextNight()
	clk.Run(night)
	e := start(t, testenv.Clocked(clk))
	ctx := headless(t, 90*time.Second)
	step(t, ctx, "desktop window", chromedp.EmulateViewport(1280, 900))
	appID, apiKey, secret := browserNewApp(t, ctx, e, "Night Shop")
	a := testenv.App{ID: appID, APIKey: apiKey, SecretKey: secret, Client: client.New(e.API.URL, apiKey, secret, nil)}
	e.PatchApp(a, map[string]any{"timeZone": "Asia/Seoul", "adSender": map[string]any{"name": testenv.AdSender, "contact": testenv.AdContact}, "adOptOut": testenv.AdOptOut})
	yes, no := true, false
	for user, night := range map[string]*bool{"owl": &yes, "lark": &no} {
		e.Device(a, "device-"+user, "tok-"+user, "android", "1.6.0", user)
		if _, err := a.Client.SetConsent(context.Background(), "device-"+user, &yes, night); err != nil {
			t.Fatalf("consent of %s: %v", user, err)
		}
	}
	appPath := e.Admin.URL + "/apps/" + appID

	step(t, ctx, "compose an ad at night",
		chromedp.Navigate(appPath+"/compose"),
		chromedp.WaitVisible(chromedp.CSS("#compose")),
		chromedp.SetValue(chromedp.CSS("#compose-users"), "owl\nlark"),
		chromedp.SetValue(chromedp.CSS("#compose-title"), "(광고) Midnight sale"),
		chromedp.SetValue(chromedp.CSS("#compose-content"), "Until 02:00 only."),
		chromedp.Click(chromedp.CSS("#compose-marketing")),
		chromedp.Click(chromedp.CSS("#night-defer")),
		chromedp.SetValue(chromedp.CSS("#compose-group"), "midnight"),
		chromedp.Click(chromedp.CSS("#compose-review")),
		chromedp.WaitVisible(chromedp.CSS("#confirm-send")),
	)
	if n := text(t, ctx, "#review-night"); !strings.Contains(n, "It is night now") || !strings.Contains(n, "08:00") || !strings.Contains(n, "defer") {
		t.Errorf("review: got night notice %q, want it night now, the rest sent at 08:00", n)
	}
	footer := evaluate[string](t, ctx, "read the footer", `document.querySelector("#review-footer").textContent`)
	if footer != testenv.AdFooter {
		t.Errorf("review: got footer %q, want %q", footer, testenv.AdFooter)
	}
	review := definitions(t, ctx, "#review dl")
	if review["Title"] != "(광고) Midnight sale" || review["At night"] != "defer to 08:00" {
		t.Errorf("review list: got %v, want the title and the night policy on their rows", review)
	}
	step(t, ctx, "confirm the push", chromedp.Click(chromedp.CSS("#confirm-send")), chromedp.WaitVisible(chromedp.CSS("#notice")))
	loc := evaluate[string](t, ctx, "read the location", `location.pathname`)
	id := loc[strings.LastIndex(loc, "/")+1:]
	var stored testenv.NightView
	testenv.WaitFor(t, "the night-consent device", 20*time.Second, func() bool {
		stored = e.NightPush(id)
		return stored.Counts.Sent == 1
	})
	if stored.NightPolicy != "defer" || stored.Counts.DeferredNight != 1 || stored.DeferredUntil == nil {
		t.Fatalf("stored push: got %+v, want nightPolicy defer, 1 token deferred", stored)
	}

	step(t, ctx, "the push's page", chromedp.Navigate(appPath+"/pushes/"+id), chromedp.WaitVisible(chromedp.CSS("#push-deferred")))
	got := definitions(t, ctx, "section.card dl")
	for label, want := range map[string]string{"Status": "sending", "Title": "(광고) Midnight sale", "Badge": "no", "Server Actions": "1",
		"Request group": "midnight"} {
		if got[label] != want {
			t.Errorf("push page: %q shows %q, want %q (all: %v)", label, got[label], want, got)
		}
	}
	if !strings.HasPrefix(got["Ad footer"], strings.TrimPrefix(testenv.AdFooter, "\n")) {
		t.Errorf("push page: Ad footer shows %q, want the footer first", got["Ad footer"])
	}
	wantFits(t, ctx, "push page")

	step(t, ctx, "the group's page", chromedp.Navigate(appPath+"/groups/midnight"), chromedp.WaitVisible(chromedp.CSS("#group-counts")))
	if row := text(t, ctx, "#group-counts"); !strings.Contains(row, "Deferred to 08:00") || text(t, ctx, "#group-deferred") != "1" {
		t.Errorf("group page: got %q, want a row Deferred to 08:00 counting 1", row)
	}
	wantFits(t, ctx, "group page")
}
