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
	"github.com/heraldpush/herald/sendstore"
)

// TestDashboardDeferredPush: a push whose part waits for the morning shows
// it (how many, until when) and offers its cancel until 5 minutes before;
// the cancel, confirmed, suppresses and refunds it.
func TestDashboardDeferredPush(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	a := newDashApp(t, e, b)
	ctx := context.Background()
	setAdFooter(t, e, a)
	morning := time.Date(2026, 12, 2, 8, 0, 0, 0, seoul)
	deferred := func() string { return deferredPush(t, e, a, morning) }
	e.clock.Set(time.Date(2026, 12, 1, 23, 0, 0, 0, seoul))
	id := deferred()
	_, body := b.get(a.path + "/pushes/" + id)
	wantIn(t, "push page", body, `id="push-deferred">1 tokens without night consent are sent at 2026-12-02 08:00`,
		`id="count-deferred">1<`, `id="cancel-deferred"`)
	_, body = b.get(a.path + "/scheduled/" + id + "/cancel")
	wantIn(t, "confirmation", body, "Cancel the deferred part of this push?", `id="confirm-cancel"`)
	if to := b.submit(a.path+"/scheduled/"+id+"/cancel", a.path+"/scheduled/"+id+"/cancel", url.Values{"confirmed": {"yes"}}); to != a.path+"/pushes/"+id {
		t.Errorf("after the cancel: sent to %s, want the push", to)
	}
	p, _ := e.db.Push(ctx, id)
	if p.Counts.SuppressedNight != 1 || p.Counts.DeferredNight != 0 || p.ServerActionsHalf != 0 {
		t.Errorf("after the cancel: got %+v, %d half units; want 1 suppressed by the night, none deferred, refunded", p.Counts, p.ServerActionsHalf)
	}
	_, body = b.get(a.path + "/pushes/" + id)
	if wantIn(t, "push page after the cancel", body, `id="count-deferred">0<`); containsAny(body, `id="cancel-deferred"`, `id="push-deferred"`) {
		t.Errorf("push page after the cancel: still offers or shows the deferred part")
	}

	late := deferred()
	e.clock.Set(morning.Add(-4 * time.Minute))
	b.login() // the session of the day before has ended
	_, body = b.get(a.path + "/scheduled/" + late + "/cancel")
	wantIn(t, "confirmation at 07:56", body, "The deferred part can no longer be cancelled")
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// setAdFooter gives the app the footer's settings an ad needs (art. 50(4)).
func setAdFooter(t *testing.T, e *dashEnv, a dashApp) {
	t.Helper()
	app := a.app
	app.AdSenderName, app.AdSenderContact, app.AdOptOut = "Herald", "080", "Opt out: Settings"
	if err := e.db.UpdateApp(context.Background(), app); err != nil {
		t.Fatal(err)
	}
}

// deferredPush sends u1 a marketing push with nightPolicy defer and
// records its fan-out at night (deferFanout).
func deferredPush(t *testing.T, e *dashEnv, a dashApp, morning time.Time) string {
	t.Helper()
	ctx := context.Background()
	yes := true
	res, err := a.c.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "(광고) Night sale", Content: "c",
		Options: &client.Options{IsMarketing: &yes, NightPolicy: "defer"}})
	if err != nil {
		t.Fatal(err)
	}
	deferFanout(t, e, res.PushID, morning)
	return res.PushID
}

// deferFanout records the fan-out of a push to u1 as delivery does at
// night when u1's one device (d1) has no night consent: one chunk,
// deferred to morning (no worker runs here).
func deferFanout(t *testing.T, e *dashEnv, pushID string, morning time.Time) {
	t.Helper()
	d := herald.Delivery{Seq: 0, UserID: "u1", DeviceID: "d1", Token: "t1", Platform: herald.PlatformAndroid, State: herald.DeliveryPending}
	f := sendstore.Fanout{Deliveries: []herald.Delivery{d}, Deferred: []sendstore.DeferredChunk{{Chunk: 0, Until: morning, RefundHalf: 1}}}
	f.To.Seq, f.To.Chunk = 1, 1
	if started, err := e.db.StartSending(context.Background(), pushID, f); err != nil || !started {
		t.Fatalf("StartSending: %v %v", started, err)
	}
}

// TestCancelDeferredRecorded: cancelling the deferred part of a push with
// nothing else open answers the push as it then stands (done, finished,
// counts final, refunded) and leaves a trace: an entry of its edit trail
// saying what was cancelled and refunded, in the JSON and on the push page.
func TestCancelDeferredRecorded(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	a := newDashApp(t, e, b)
	setAdFooter(t, e, a)
	morning := time.Date(2026, 12, 2, 8, 0, 0, 0, seoul)
	e.clock.Set(time.Date(2026, 12, 1, 23, 0, 0, 0, seoul))
	id := deferredPush(t, e, a, morning)

	type pushView struct {
		Status        string
		FinishedAt    *time.Time
		DeferredUntil *time.Time
		ServerActions float64
		Counts        struct{ Tokens, SuppressedNight, DeferredNight int }
		Edits         []struct {
			Changes, From     map[string]string
			DeferredCancelled *struct {
				DeferredUntil         time.Time
				Tokens, Users         int
				RefundedServerActions float64
			}
		}
	}
	check := func(what string, v pushView) {
		t.Helper()
		if v.Status != "done" || v.FinishedAt == nil || v.DeferredUntil != nil || v.ServerActions != 0 ||
			v.Counts.Tokens != 1 || v.Counts.SuppressedNight != 1 || v.Counts.DeferredNight != 0 {
			t.Errorf("%s: got %+v, want done and finished, 1 token suppressed by the night, none deferred, 0 Server Actions", what, v)
		}
		if len(v.Edits) != 1 || v.Edits[0].DeferredCancelled == nil {
			t.Fatalf("%s: got edits %+v, want one entry recording the cancel", what, v.Edits)
		}
		c := *v.Edits[0].DeferredCancelled
		if !c.DeferredUntil.Equal(morning) || c.Tokens != 1 || c.Users != 1 || c.RefundedServerActions != 0.5 {
			t.Errorf("%s: got cancel %+v, want 1 token of 1 user due %v, 0.5 refunded", what, c, morning)
		}
		if ch, from := v.Edits[0].Changes, v.Edits[0].From; ch["serverActions"] != "0" || from["serverActions"] != "0.5" ||
			ch["deferredNight"] != "0" || from["deferredNight"] != "1" {
			t.Errorf("%s: got changes %v from %v, want serverActions 0.5 → 0, deferredNight 1 → 0", what, ch, from)
		}
	}
	var answer, stored pushView
	e.adminCall(t, "POST", "/admin/v1/pushes/"+id+"/cancel", &answer)
	check("cancel answer", answer)
	e.adminCall(t, "GET", "/admin/v1/pushes/"+id, &stored)
	check("push after the cancel", stored)
	_, body := b.get(a.path + "/pushes/" + id)
	wantIn(t, "push page", body, `id="push-status">done<`,
		"Deferred part cancelled: 1 tokens of 1 users that were to be sent at 2026-12-02 08:00:00 KST count as suppressed by the night; 0.5 Server Actions refunded.")
}

// unpaired finds in a page a dd that follows a dd or a dt that follows a
// dt: the dashboard's lists are a grid of two columns, label and value, so
// either shifts every pair after it.
var unpaired = regexp.MustCompile(`</dd>\s*<dd|</dt>\s*<dt`)

// TestDashboardComposeNight: the compose form offers the night policy; its
// review of an ad says when it is night in the app's zone (now, or at the
// scheduled time) and what the policy does then, and shows the footer the
// messages get; the confirmed push carries the policy. The page of a
// deferred push lists each label with its value, and its request group
// counts the tokens deferred to 08:00.
func TestDashboardComposeNight(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	a := newDashApp(t, e, b)
	ctx := context.Background()
	setAdFooter(t, e, a)
	e.register(t, a.path, "d1", "t1", "u1")
	compose := func(t *testing.T, form url.Values) string {
		t.Helper()
		form.Set("csrf", b.csrf(a.path+"/compose"))
		resp, body := b.with(t).post(a.path+"/compose", form)
		if form.Get("confirmed") == "yes" {
			wantStatus(t, resp, body, http.StatusSeeOther)
			return resp.Header.Get("Location")
		}
		wantStatus(t, resp, body, http.StatusOK)
		return body
	}
	ad := func(policy, at string) url.Values {
		return url.Values{"target": {"users"}, "userIds": {"u1"}, "title": {"(광고) Night sale"}, "content": {"c"}, "isMarketing": {"true"},
			"nightPolicy": {policy}, "scheduleTime": {at}, "requestGroupId": {"night"}}
	}
	_, body := b.get(a.path + "/compose")
	wantIn(t, "compose page", body, `id="night-skip" checked>`, `name="nightPolicy" value="defer" id="night-defer">`)

	e.clock.Set(time.Date(2026, 12, 1, 23, 0, 0, 0, seoul))
	b.login() // the session of noon has ended
	body = compose(t, ad("defer", ""))
	wantIn(t, "review at 23:00", body, `id="review-night">It is night now (21:00–08:00, Asia/Seoul)`,
		"get it at <strong>2026-12-02 08:00:00 KST</strong>", `id="review-policy">defer to 08:00<`,
		`id="review-footer">`+"\nHerald 080\nOpt out: Settings</div>", `name="nightPolicy" value="defer"`)
	form := ad("defer", "")
	form.Set("confirmed", "yes")
	form.Set("key", composeKey.FindStringSubmatch(body)[1])
	sent := compose(t, form)
	p, err := e.db.Push(ctx, strings.TrimPrefix(sent, a.path+"/pushes/"))
	if err != nil || p.NightPolicy != herald.NightDefer || p.AdFooter != "\nHerald 080\nOpt out: Settings" {
		t.Fatalf("composed push: got policy %q, footer %q (%v); want defer and the app's footer", p.NightPolicy, p.AdFooter, err)
	}
	wantIn(t, "review at 23:00, skip", compose(t, ad("skip", "")), `id="review-night">It is night now`, "do not get it at all")

	deferFanout(t, e, p.ID, time.Date(2026, 12, 2, 8, 0, 0, 0, seoul))
	_, body = b.get(sent)
	wantIn(t, "push page", body, `id="push-deferred"`, `id="ad-footer">`)
	if m := unpaired.FindString(body); m != "" {
		t.Errorf("push page: got %q in its list, want each dt followed by its dd", m)
	}
	_, body = b.get(a.path + "/groups/night")
	wantIn(t, "group page", body, `<th>Deferred to 08:00</th><td class="num" id="group-deferred">1<`)

	e.clock.Set(time.Date(2026, 12, 2, 12, 0, 0, 0, seoul))
	b.login()
	if body = compose(t, ad("defer", "")); strings.Contains(body, `id="review-night"`) {
		t.Errorf("review at noon: says it is night")
	}
	wantIn(t, "review of an ad scheduled for 22:00", compose(t, ad("skip", "2026-12-02T22:00")), `id="review-night">Its send time is at night`)
	if body = compose(t, url.Values{"target": {"users"}, "userIds": {"u1"}, "title": {"Hello"}, "content": {"c"}, "scheduleTime": {"2026-12-02T22:00"}}); containsAny(body, `id="review-night"`, `id="review-footer"`) {
		t.Errorf("review of a push that is not an ad: got a night notice or a footer")
	}
}
