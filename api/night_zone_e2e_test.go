package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
)

// The night window is judged in each device's own zone when it reported
// one, the app's zone otherwise (DESIGN 14): at 22:00 in Seoul it is 13:00
// in London.

// zoneNightApp is an app in appZone whose two users both have marketing
// consent by day only: "here" on a device that reported no zone (the
// app's zone decides), "there" on one that reported otherZone.
func zoneNightApp(t *testing.T, e *env, appZone, otherZone string) testenv.App {
	t.Helper()
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true, "timeZone": appZone, "adPrefixCheck": false})
	ctx := context.Background()
	for _, d := range []struct{ user, zone string }{{"here", ""}, {"there", otherZone}} {
		if _, err := a.Client.RegisterPushToken(ctx, client.RegisterRequest{DeviceID: "dev-" + d.user, Token: "tok-" + a.ID + "-" + d.user,
			Platform: "android", AppSourceVersion: "1.6.0", UserID: d.user, TimeZone: d.zone}); err != nil {
			t.Fatalf("register %s: %v", d.user, err)
		}
		on := true
		if _, err := a.Client.SetMarketing(ctx, d.user, client.MarketingState{Marketing: &on}); err != nil {
			t.Fatalf("consent of %s: %v", d.user, err)
		}
	}
	return a
}

func pushMarketing(t *testing.T, a testenv.App, policy string) string {
	t.Helper()
	yes := true
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"here", "there"}, Title: "Sale",
		Content: "50% off", Options: &client.Options{IsMarketing: &yes, NightPolicy: policy}})
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	return res.PushID
}

// TestNightInDeviceZone: an app in Seoul at 22:00 with a device reporting
// Europe/London (13:00 there): a marketing push reaches the London device
// without night consent, and suppresses (skip) or defers to Seoul's 08:00
// (defer) the device in the app's zone; and the reverse, an app in London
// at 13:00 with a device reporting Asia/Seoul, whose device is deferred
// to Seoul's 08:00 while the one in the app's zone is sent.
func TestNightInDeviceZone(t *testing.T) {
	t.Parallel()
	london, _ := time.LoadLocation("Europe/London")
	clk := &testenv.Clock{}
	at := time.Date(2026, 12, 10, 22, 0, 0, 0, testenv.Seoul) // 13:00 in London
	clk.Run(at)
	e := start(t, testenv.Clocked(clk))
	seoulMorning := time.Date(2026, 12, 11, 8, 0, 0, 0, testenv.Seoul)
	if at.In(london).Hour() != 13 {
		t.Fatalf("22:00 in Seoul is %v in London, want 13:00", at.In(london))
	}
	type waiting struct{ id, token string }
	var deferredParts []waiting
	for _, tc := range []struct {
		name, appZone, otherZone string
		night, day               string // the user whose device is in its night, and the one in its day
	}{
		{"SeoulApp", "Asia/Seoul", "Europe/London", "here", "there"},
		{"LondonApp", "Europe/London", "Asia/Seoul", "there", "here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := zoneNightApp(t, e, tc.appZone, tc.otherZone)
			token := func(u string) string { return "tok-" + a.ID + "-" + u }

			skip := pushMarketing(t, a, "skip")
			e.WaitFinal(skip, 20*time.Second)
			if got := e.SentTo(skip); len(got) != 1 || got[token(tc.day)] != 1 {
				t.Errorf("skip: messages by token %v, want one to %s's device only", got, tc.day)
			}
			if v := e.NightPush(skip); v.Status != "done" || v.Counts.Sent != 1 || v.Counts.SuppressedNight != 1 || v.Counts.DeferredNight != 0 {
				t.Errorf("skip: got %+v, want done, 1 sent, 1 suppressed by the night", v)
			}

			deferred := pushMarketing(t, a, "defer")
			testenv.WaitFor(t, "the device in its day", 20*time.Second, func() bool { return len(e.SentTo(deferred)) == 1 })
			v := e.NightPush(deferred)
			if got := e.SentTo(deferred); got[token(tc.day)] != 1 {
				t.Errorf("defer: messages by token %v, want %s's device at once", got, tc.day)
			}
			if v.Status != "sending" || v.Counts.DeferredNight != 1 || v.DeferredUntil == nil || !v.DeferredUntil.Equal(seoulMorning) {
				t.Errorf("defer: got %+v (until %v), want sending, 1 deferred to %v (08:00 in Seoul)", v, v.DeferredUntil, seoulMorning)
			}
			deferredParts = append(deferredParts, waiting{deferred, token(tc.night)})
		})
	}
	// The morning in Seoul: each deferred device is sent then, once.
	clk.Run(seoulMorning.Add(-time.Second))
	for _, w := range deferredParts {
		v := e.WaitFinal(w.id, 30*time.Second)
		if got := e.SentTo(w.id); len(got) != 2 || got[w.token] != 1 || v.Status != "done" {
			t.Errorf("push %s after 08:00 in Seoul: %s, messages by token %v, want done and both devices once", w.id, v.Status, got)
		}
		for _, m := range e.Received(w.token) {
			if at := clk.Fake(m.ReceivedAt); at.Before(seoulMorning) {
				t.Errorf("%s: a message at %v, before 08:00 in Seoul", w.token, at)
			}
		}
	}
}
