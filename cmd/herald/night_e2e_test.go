package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/fcm/fcmtest"
	"github.com/heraldpush/herald/internal/testenv"
)

// nightApp is consentApp in Seoul ("none", "day", "all") with two more
// users of marketing consent by day only: "late", who gives night consent
// before the morning, and "quit", who withdraws marketing consent by then.
func nightApp(t *testing.T, e *env) testApp {
	t.Helper()
	a := consentApp(t, e, "Asia/Seoul")
	e.Register(a, "cons-"+a.ID[len(a.ID)-6:]+"-", "late", "quit")
	on := true
	for _, u := range []string{"late", "quit"} {
		if _, err := a.Client.SetMarketing(context.Background(), u, client.MarketingState{Marketing: &on}); err != nil {
			t.Fatalf("consent of %s: %v", u, err)
		}
	}
	return a
}

// pushDefer sends a marketing push with nightPolicy defer to users.
func pushDefer(t *testing.T, a testApp, users ...any) string {
	t.Helper()
	yes := true
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: users, Title: "Night sale", Content: "50% off",
		Options: &client.Options{IsMarketing: &yes, NightPolicy: "defer"}})
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	return res.PushID
}

// wantDeferred waits for the push's night-consent device ("all") and
// checks that n tokens wait for the morning.
func wantDeferredPush(t *testing.T, e *env, a testApp, id string, morning time.Time, n int) testenv.NightView {
	t.Helper()
	waitFor(t, "the night-consent device", 20*time.Second, func() bool { return len(e.SentTo(id)) == 1 })
	wantDelivered(t, e, a, id, "all")
	v := e.NightPush(id)
	if v.Status != "sending" || v.NightPolicy != "defer" || v.Counts.DeferredNight != n || v.DeferredUntil == nil ||
		!v.DeferredUntil.Equal(morning) || v.Counts.SuppressedConsent != 1 || v.Counts.SuppressedNight != 0 {
		t.Fatalf("before the morning: got %+v (until %v), want sending, %d deferred until %v, 1 suppressed by consent", v,
			v.DeferredUntil, n, morning)
	}
	return v
}

// morningChanges makes "late" give night consent and "quit" withdraw
// marketing consent, and fails unless that happened before the morning.
func morningChanges(t *testing.T, clk *testClock, a testApp, morning time.Time) {
	t.Helper()
	on, off := true, false
	if _, err := a.Client.SetMarketing(context.Background(), "late", client.MarketingState{Marketing: &on, MarketingNight: &on}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Client.SetMarketing(context.Background(), "quit", client.MarketingState{Marketing: &off}); err != nil {
		t.Fatal(err)
	}
	if !clk.Now().Before(morning) {
		t.Fatalf("the consent changes came after the morning (%v): the machine is too slow for this test", clk.Now())
	}
}

// wantMorning checks the push after its morning: "all" sent at once,
// "day" and "late" at 08:00 each once, "quit" suppressed, the charge kept.
func wantMorning(t *testing.T, e *env, clk *testClock, a testApp, id string, morning time.Time) {
	t.Helper()
	p := e.WaitFinal(id, 60*time.Second)
	wantDelivered(t, e, a, id, "all", "day", "late")
	v := e.NightPush(id)
	if v.Status != "done" || v.Counts.Tokens != 5 || v.Counts.Sent != 3 || v.Counts.SuppressedConsent != 2 ||
		v.Counts.SuppressedNight != 0 || v.Counts.DeferredNight != 0 || v.DeferredUntil != nil || v.ServerActions != 2.5 {
		t.Errorf("after the morning: got %s %+v (until %v), want done, 5 tokens, 3 sent, 2 suppressed by consent, 2.5 Server Actions",
			p.Status, v, v.DeferredUntil)
	}
	for _, u := range []string{"day", "late"} {
		msgs := e.Received("cons-" + a.ID[len(a.ID)-6:] + "-" + u)
		if len(msgs) != 1 {
			t.Fatalf("%s: got %d messages, want 1", u, len(msgs))
		}
		if at := clk.Fake(msgs[0].ReceivedAt); at.Before(morning) {
			t.Errorf("%s: sent at %v, before the morning %v", u, at, morning)
		}
	}
}

// TestNightDeferralRestart: the service stops while a push is deferred
// and starts again after 08:00 on the same data; the deferred part is
// sent then, each device once.
func TestNightDeferralRestart(t *testing.T) {
	t.Parallel()
	clk := &testClock{}
	morning := time.Date(2026, 12, 3, 8, 0, 0, 0, seoul)
	clk.Run(morning.Add(-time.Hour))
	e := startClocked(t, clk)
	a := nightApp(t, e)
	clk.Run(morning.Add(-12 * time.Second)) // the app is set up: the morning comes soon after the push
	id := pushDefer(t, a, "none", "day", "all", "late", "quit")
	wantDeferredPush(t, e, a, id, morning, 3)
	morningChanges(t, clk, a, morning)
	if err := e.svc.shutdown(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the morning to pass while the service is down", 30*time.Second, func() bool {
		return clk.Now().After(morning.Add(time.Second))
	})
	wantDelivered(t, e, a, id, "all")
	e.startService(func(c *config) { c.now = clk.Now })
	wantMorning(t, e, clk, a, id, morning)
}

// startNightNodes starts two nodes on one schema on clk, an hour before
// the morning, with the app of nightApp.
func startNightNodes(t *testing.T, clk *testClock, morning time.Time) (*env, testApp) {
	t.Helper()
	clk.Run(morning.Add(-time.Hour))
	e := startClocked(t, clk)
	other, err := startService(context.Background(), e.config(func(c *config) { c.now = clk.Now }), io.Discard, e.logs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.shutdown() })
	return e, nightApp(t, e)
}

// TestNightDeferralNodes (PostgreSQL): two nodes on one schema; the node
// that accepted the push stops while it is deferred and a third starts;
// at 08:00 the two live nodes send the deferred part once.
func TestNightDeferralNodes(t *testing.T) {
	if testEngine() != "postgres" {
		t.Skip("several nodes need PostgreSQL: set HERALD_TEST_DATABASE_URL")
	}
	t.Parallel()
	clk := &testClock{}
	morning := time.Date(2026, 12, 4, 8, 0, 0, 0, seoul)
	e, a := startNightNodes(t, clk, morning)
	clk.Run(morning.Add(-12 * time.Second))
	id := pushDefer(t, a, "none", "day", "all", "late", "quit")
	wantDeferredPush(t, e, a, id, morning, 3)
	morningChanges(t, clk, a, morning)
	if err := e.svc.shutdown(); err != nil { // the accepting node goes away
		t.Fatal(err)
	}
	e.startService(func(c *config) { c.now = clk.Now })
	wantMorning(t, e, clk, a, id, morning)
	var workers int
	if err := e.QueryRow(`SELECT COUNT(*) FROM river_job WHERE kind = 'herald.send' AND args->>'pushId' = ? AND args->>'morning' IS NOT NULL`,
		id).Scan(&workers); err != nil || workers != 1 {
		t.Errorf("deferred send jobs: got %d %v, want 1", workers, err)
	}
}

// TestNightDeferralSurvivesKill runs the real binary (SQLite) in a zone
// where it is 22:00 now: a deferred push's part for the morning outlives
// a SIGKILL of the process, is shown the same after the restart, and is
// cancelled there with its refund. (The firing after a restart is
// TestNightDeferralRestart's, on an injected clock.)
func TestNightDeferralSurvivesKill(t *testing.T) {
	testenv.SQLiteOnly(t, "a crash of the one process on the embedded store; TestNightDeferralNodes covers PostgreSQL")
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel() // its own process, data dir and emulator
	const adminToken = "ha_nightTestAdminToken0123456789abcdefghij"
	bin := buildHerald(t)
	emu, emuURL := fcmtest.StartEmulator(t, emulator.Options{})
	dataDir := t.TempDir()
	proc := startProcess(t, bin, dataDir, adminToken, emuURL)
	app := proc.newApp(adminToken, "night", emuURL)
	zone := zoneWithHour(t, time.Now(), 22)
	loc, _ := time.LoadLocation(zone)
	settings := []byte(`{"tier":"business","appUserEnabled":true,"adPrefixCheck":false,"timeZone":"` + zone + `"}`)
	if code := proc.adminJSON(adminToken, "PATCH", "/admin/v1/apps/"+app.AppID, settings, nil); code != http.StatusOK {
		t.Fatalf("patch app: got %d", code)
	}
	c := client.New(proc.publicURL, app.APIKey, app.SecretKey, nil)
	ctx := context.Background()
	on := true
	for _, u := range []string{"all", "day"} {
		if _, err := c.RegisterPushToken(ctx, client.RegisterRequest{DeviceID: "dev-" + u, Token: "tok-" + u, Platform: "android",
			AppSourceVersion: "1.6.0", UserID: u}); err != nil {
			t.Fatal(err)
		}
		state := client.MarketingState{Marketing: &on}
		if u == "all" {
			state.MarketingNight = &on
		}
		if _, err := c.SetMarketing(ctx, u, state); err != nil {
			t.Fatal(err)
		}
	}
	res, err := c.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"all", "day"}, Title: "Night sale", Content: "c",
		Options: &client.Options{IsMarketing: &on, NightPolicy: "defer"}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the night-consent device", 20*time.Second, func() bool { return len(emu.Messages("tok-all")) == 1 })
	morning := herald.NextMorning(time.Now(), loc)
	read := func(p *process) testenv.NightView {
		var v testenv.NightView
		if code := p.adminJSON(adminToken, "GET", "/admin/v1/pushes/"+res.PushID, nil, &v); code != http.StatusOK {
			t.Fatalf("get push: got %d", code)
		}
		return v
	}
	wantWaiting := func(when string, v testenv.NightView) {
		if v.Status != "sending" || v.Counts.DeferredNight != 1 || v.DeferredUntil == nil || !v.DeferredUntil.Equal(morning) || v.ServerActions != 1 {
			t.Fatalf("%s: got %+v (until %v), want sending, 1 deferred until %v, 1 Server Action", when, v, v.DeferredUntil, morning)
		}
	}
	// The kill comes once the sent device is recorded (its message
	// reaching the emulator comes first): killed before, its chunk's job
	// would wait for River's rescue (90 s) and the push for it.
	waitFor(t, "the sent device to be recorded", 20*time.Second, func() bool { return read(proc).Counts.Sent == 1 })
	wantWaiting("before the kill", read(proc))
	proc.kill()
	proc = startProcess(t, bin, dataDir, adminToken, emuURL)
	wantWaiting("after the restart", read(proc))
	var answer testenv.NightView
	if code := proc.adminJSON(adminToken, "POST", "/admin/v1/pushes/"+res.PushID+"/cancel", nil, &answer); code != http.StatusOK {
		t.Fatalf("cancel: got %d, want 200", code)
	}
	waitFor(t, "the push to end", 20*time.Second, func() bool { return read(proc).Status == "done" })
	if v := read(proc); v.Counts.Sent != 1 || v.Counts.SuppressedNight != 1 || v.Counts.DeferredNight != 0 || v.ServerActions != 0.5 {
		t.Errorf("after the cancel: got %+v, want 1 sent, 1 suppressed by the night, 0.5 Server Actions", v)
	}
	if n := len(emu.Messages("tok-day")); n != 0 {
		t.Errorf("day: got %d messages, want none", n)
	}
}

// consentApp is an app with three users of different consent: "none" (the
// default, no marketing), "day" (marketing, not at night) and "all"
// (marketing at any hour). The consent is set through PATCH marketing and
// the SDK's consent switch. The app puts the (광고) prefix in its bodies
// (adPrefixCheck off), so options.isMarketing alone marks a plain title.
func consentApp(t *testing.T, e *env, tz string) testApp {
	t.Helper()
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true, "timeZone": tz, "adPrefixCheck": false})
	e.Register(a, "cons-"+a.ID[len(a.ID)-6:]+"-", "none", "day", "all")
	ctx := context.Background()
	on, off := true, false
	if got, err := a.Client.SetMarketing(ctx, "day", client.MarketingState{Marketing: &on}); err != nil || got != (client.Consent{Marketing: true}) {
		t.Fatalf("set day consent: got %+v %v, want marketing only", got, err)
	}
	if got, err := a.Client.SetMarketing(ctx, "all", client.MarketingState{Marketing: &on, MarketingNight: &off}); err != nil || got.MarketingNight {
		t.Fatalf("set all consent: got %+v %v", got, err)
	}
	// The in-app switch turns night on for "all"'s device (registered by
	// e.register as dev-all-2).
	if got, err := a.Client.SetConsent(ctx, "dev-all-2", nil, &on); err != nil || !got.Marketing || !got.MarketingNight {
		t.Fatalf("SDK consent for all: got %+v %v, want both true", got, err)
	}
	for user, want := range map[string]herald.Consent{"none": {}, "day": {Marketing: true}, "all": {Marketing: true, MarketingNight: true}} {
		u := e.UserView(a, user)
		if len(u.Devices) != 1 || u.Devices[0].Marketing != want.Marketing || u.Devices[0].MarketingNight != want.MarketingNight {
			t.Fatalf("device consent of %s: got %+v, want %+v", user, u.Devices, want)
		}
	}
	return a
}

// wantDelivered checks which of the users' tokens received push id.
func wantDelivered(t *testing.T, e *env, a testApp, id string, users ...string) {
	t.Helper()
	want := map[string]int{}
	for _, u := range users {
		want["cons-"+a.ID[len(a.ID)-6:]+"-"+u] = 1
	}
	if got := e.SentTo(id); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("messages by token: got %v, want %v", got, want)
	}
}

// zoneWithHour returns an Etc/GMT zone whose wall clock reads hour (plus the
// current minutes) at now. Etc/GMT signs are inverted: Etc/GMT-9 is UTC+9.
func zoneWithHour(t *testing.T, now time.Time, hour int) string {
	t.Helper()
	off := (hour - now.UTC().Hour() + 48) % 24 // UTC+off, 0..23
	if off > 12 {
		off -= 24 // -11..12, all of which Etc/GMT has
	}
	name := "Etc/GMT"
	switch {
	case off > 0:
		name = fmt.Sprintf("Etc/GMT-%d", off)
	case off < 0:
		name = fmt.Sprintf("Etc/GMT+%d", -off)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	if got := now.In(loc).Hour(); got != hour {
		t.Fatalf("%s: got hour %d, want %d", name, got, hour)
	}
	return name
}
