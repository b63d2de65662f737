package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/client"
)

// The night and consent scenes the end-to-end tests share: an app in a
// zone whose users hold each consent, a marketing push deferred to the
// morning, and what must hold before and after 08:00.

// NightApp is ConsentApp in Seoul ("none", "day", "all") with two more
// users of marketing consent by day only: "late", who gives night consent
// before the morning, and "quit", who withdraws marketing consent by then.
func NightApp(t *testing.T, e *Harness) App {
	t.Helper()
	a := ConsentApp(t, e, "Asia/Seoul")
	e.Register(a, "cons-"+a.ID[len(a.ID)-6:]+"-", "late", "quit")
	on := true
	for _, u := range []string{"late", "quit"} {
		if _, err := a.Client.SetMarketing(context.Background(), u, client.MarketingState{Marketing: &on}); err != nil {
			t.Fatalf("consent of %s: %v", u, err)
		}
	}
	return a
}

// PushDefer sends a marketing push with nightPolicy defer to users.
func PushDefer(t *testing.T, a App, users ...any) string {
	t.Helper()
	yes := true
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: users, Title: "Night sale", Content: "50% off",
		Options: &client.Options{IsMarketing: &yes, NightPolicy: "defer"}})
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	return res.PushID
}

// WantDeferredPush waits for the push's night-consent device ("all") and
// checks that n tokens wait for the morning.
func WantDeferredPush(t *testing.T, e *Harness, a App, id string, morning time.Time, n int) NightView {
	t.Helper()
	WaitFor(t, "the night-consent device", 20*time.Second, func() bool { return len(e.SentTo(id)) == 1 })
	WantDelivered(t, e, a, id, "all")
	v := e.NightPush(id)
	if v.Status != "sending" || v.NightPolicy != "defer" || v.Counts.DeferredNight != n || v.DeferredUntil == nil ||
		!v.DeferredUntil.Equal(morning) || v.Counts.SuppressedConsent != 1 || v.Counts.SuppressedNight != 0 {
		t.Fatalf("before the morning: got %+v (until %v), want sending, %d deferred until %v, 1 suppressed by consent", v,
			v.DeferredUntil, n, morning)
	}
	return v
}

// MorningChanges makes "late" give night consent and "quit" withdraw
// marketing consent, and fails unless that happened before the morning.
func MorningChanges(t *testing.T, clk *Clock, a App, morning time.Time) {
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

// WantMorning checks the push after its morning: "all" sent at once,
// "day" and "late" at 08:00 each once, "quit" suppressed, the charge kept.
func WantMorning(t *testing.T, e *Harness, clk *Clock, a App, id string, morning time.Time) {
	t.Helper()
	p := e.WaitFinal(id, 60*time.Second)
	WantDelivered(t, e, a, id, "all", "day", "late")
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

// ConsentApp is an app with three users of different consent: "none" (the
// default, no marketing), "day" (marketing, not at night) and "all"
// (marketing at any hour). The consent is set through PATCH marketing and
// the SDK's consent switch. The app puts the (광고) prefix in its bodies
// (adPrefixCheck off), so options.isMarketing alone marks a plain title.
func ConsentApp(t *testing.T, e *Harness, tz string) App {
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

// WantDelivered checks which of the users' tokens received push id.
func WantDelivered(t *testing.T, e *Harness, a App, id string, users ...string) {
	t.Helper()
	want := map[string]int{}
	for _, u := range users {
		want["cons-"+a.ID[len(a.ID)-6:]+"-"+u] = 1
	}
	if got := e.SentTo(id); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("messages by token: got %v, want %v", got, want)
	}
}

// ZoneWithHour returns an Etc/GMT zone whose wall clock reads hour (plus the
// current minutes) at now. Etc/GMT signs are inverted: Etc/GMT-9 is UTC+9.
func ZoneWithHour(t *testing.T, now time.Time, hour int) string {
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
