package main

import (
	"context"
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

// TestNightDeferralRestart: the service stops while a push is deferred
// and starts again after 08:00 on the same data; the deferred part is
// sent then, each device once.
func TestNightDeferralRestart(t *testing.T) {
	t.Parallel()
	clk := &testClock{}
	morning := time.Date(2026, 12, 3, 8, 0, 0, 0, testenv.Seoul)
	clk.Run(morning.Add(-time.Hour))
	e := startClocked(t, clk)
	a := testenv.NightApp(t, e.Harness)
	clk.Run(morning.Add(-12 * time.Second)) // the app is set up: the morning comes soon after the push
	id := testenv.PushDefer(t, a, "none", "day", "all", "late", "quit")
	testenv.WantDeferredPush(t, e.Harness, a, id, morning, 3)
	testenv.MorningChanges(t, clk, a, morning)
	if err := e.svc.shutdown(); err != nil {
		t.Fatal(err)
	}
	clk.Run(morning.Add(time.Second)) // the morning passes while the service is down
	testenv.WantDelivered(t, e.Harness, a, id, "all")
	e.startService(func(c *config) { c.overrides.Clock = clk.Now })
	testenv.WantMorning(t, e.Harness, clk, a, id, morning)
}

// startNightNodes starts two nodes on one schema on clk, an hour before
// the morning, with the app of nightApp.
func startNightNodes(t *testing.T, clk *testClock, morning time.Time) (*env, testApp) {
	t.Helper()
	clk.Run(morning.Add(-time.Hour))
	e := startClocked(t, clk)
	other, err := startService(context.Background(), e.config(func(c *config) { c.overrides.Clock = clk.Now }), io.Discard, e.logs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.shutdown() })
	return e, testenv.NightApp(t, e.Harness)
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
	morning := time.Date(2026, 12, 4, 8, 0, 0, 0, testenv.Seoul)
	e, a := startNightNodes(t, clk, morning)
	clk.Run(morning.Add(-12 * time.Second))
	id := testenv.PushDefer(t, a, "none", "day", "all", "late", "quit")
	testenv.WantDeferredPush(t, e.Harness, a, id, morning, 3)
	testenv.MorningChanges(t, clk, a, morning)
	if err := e.svc.shutdown(); err != nil { // the accepting node goes away
		t.Fatal(err)
	}
	e.startService(func(c *config) { c.overrides.Clock = clk.Now })
	testenv.WantMorning(t, e.Harness, clk, a, id, morning)
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
	zone := testenv.ZoneWithHour(t, time.Now(), 22)
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
