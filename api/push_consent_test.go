package api_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/client"
)

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

// consentApp is an app with three users of different consent: "none" (the
// default, no marketing), "day" (marketing, not at night) and "all"
// (marketing at any hour). The consent is set through PATCH marketing and
// the SDK's consent switch. The app puts the (광고) prefix in its bodies
// (adPrefixCheck off), so options.isMarketing alone marks a plain title.
func consentApp(t *testing.T, e *env, tz string) testenv.App {
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
func wantDelivered(t *testing.T, e *env, a testenv.App, id string, users ...string) {
	t.Helper()
	want := map[string]int{}
	for _, u := range users {
		want["cons-"+a.ID[len(a.ID)-6:]+"-"+u] = 1
	}
	if got := e.SentTo(id); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("messages by token: got %v, want %v", got, want)
	}
}

func TestPushConsentAndNight(t *testing.T) {
	t.Parallel()
	e := start(t)
	now := time.Now()
	// 02:xx and 14:xx leave hours of margin to the 21:00 and 08:00 edges.
	night := consentApp(t, e, zoneWithHour(t, now, 2))
	day := consentApp(t, e, zoneWithHour(t, now, 14))
	everyone := []any{"none", "day", "all"}
	yes := true

	tests := []struct {
		name                string
		app                 testenv.App
		req                 client.PushUsersRequest
		wantTo              []string
		wantConsent, wantNt int
	}{
		{"AdTitleAtNight", night, client.PushUsersRequest{UserIDs: everyone, Title: "(광고) 50% off", Content: "c"}, []string{"all"}, 1, 1},
		{"AdTitleNoSpaceAtNight", night, client.PushUsersRequest{UserIDs: everyone, Title: "(광고)sale", Content: "c"}, []string{"all"}, 1, 1},
		{"IsMarketingAtNight", night, client.PushUsersRequest{UserIDs: everyone, Title: "Sale", Content: "c", Options: &client.Options{IsMarketing: &yes}}, []string{"all"}, 1, 1},
		{"PlainAtNight", night, client.PushUsersRequest{UserIDs: everyone, Title: "Your order shipped", Content: "c"}, []string{"all", "day", "none"}, 0, 0},
		{"AdInsideTitleIsPlain", night, client.PushUsersRequest{UserIDs: everyone, Title: "Re: (광고)", Content: "c"}, []string{"all", "day", "none"}, 0, 0},
		{"AdTitleByDay", day, client.PushUsersRequest{UserIDs: everyone, Title: "(광고) 50% off", Content: "c"}, []string{"all", "day"}, 1, 0},
		{"IsMarketingByDay", day, client.PushUsersRequest{UserIDs: everyone, Title: "Sale", Content: "c", Options: &client.Options{IsMarketing: &yes}}, []string{"all", "day"}, 1, 0},
		{"PlainByDay", day, client.PushUsersRequest{UserIDs: everyone, Title: "Hello", Content: "c"}, []string{"all", "day", "none"}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.app.Client.PushUsers(context.Background(), tt.req)
			if err != nil {
				t.Fatalf("push: got %v, want nil", err)
			}
			p := e.WaitFinal(res.PushID, 10*time.Second)
			c := p.Counts
			if p.Status != "done" || c.Sent != len(tt.wantTo) || c.SuppressedConsent != tt.wantConsent || c.SuppressedNight != tt.wantNt {
				t.Errorf("push: got status %s sent %d suppressedConsent %d suppressedNight %d, want done %d %d %d",
					p.Status, c.Sent, c.SuppressedConsent, c.SuppressedNight, len(tt.wantTo), tt.wantConsent, tt.wantNt)
			}
			if c.Unreachable != 0 || len(p.UnreachableUsers) != 0 {
				t.Errorf("unreachable: got %d %v, want none (suppressed users are not unreachable)", c.Unreachable, p.UnreachableUsers)
			}
			wantDelivered(t, e, tt.app, res.PushID, tt.wantTo...)
		})
	}

	t.Run("MessagesEachTitleOnItsOwn", func(t *testing.T) {
		res, err := night.Client.PushMessages(context.Background(), client.PushMessagesRequest{Messages: []client.Message{
			{UserID: "none", Title: "(광고) for none", Content: "c"},
			{UserID: "day", Title: "(광고) for day", Content: "c"},
			{UserID: "all", Title: "Receipt for all", Content: "c"},
		}})
		if err != nil {
			t.Fatalf("push: got %v, want nil", err)
		}
		p := e.WaitFinal(res.PushID, 10*time.Second)
		if c := p.Counts; c.Sent != 1 || c.SuppressedConsent != 1 || c.SuppressedNight != 1 || !p.Marketing {
			t.Errorf("push: got sent %d suppressedConsent %d suppressedNight %d marketing %v, want 1 1 1 true",
				c.Sent, c.SuppressedConsent, c.SuppressedNight, p.Marketing)
		}
		wantDelivered(t, e, night, res.PushID, "all")
	})
	t.Run("MessagesPlainReachesEveryone", func(t *testing.T) {
		res, err := night.Client.PushMessages(context.Background(), client.PushMessagesRequest{Messages: []client.Message{
			{UserID: "none", Title: "Plain none", Content: "c"},
			{UserID: "day", Title: "Plain day", Content: "c"},
		}})
		if err != nil {
			t.Fatalf("push: got %v, want nil", err)
		}
		p := e.WaitFinal(res.PushID, 10*time.Second)
		if c := p.Counts; c.Sent != 2 || c.SuppressedConsent != 0 || c.SuppressedNight != 0 {
			t.Errorf("push: got sent %d suppressedConsent %d suppressedNight %d, want 2 0 0", c.Sent, c.SuppressedConsent, c.SuppressedNight)
		}
		wantDelivered(t, e, night, res.PushID, "day", "none")
	})
	t.Run("ConsentWithdrawnBeforeSend", func(t *testing.T) {
		no := false
		if _, err := day.Client.SetMarketing(context.Background(), "day", client.MarketingState{Marketing: &no}); err != nil {
			t.Fatalf("withdraw consent: %v", err)
		}
		res, err := day.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: everyone, Title: "(광고) again", Content: "c"})
		if err != nil {
			t.Fatalf("push: got %v, want nil", err)
		}
		if c := e.WaitFinal(res.PushID, 10*time.Second).Counts; c.Sent != 1 || c.SuppressedConsent != 2 {
			t.Errorf("push: got sent %d suppressedConsent %d, want 1 2", c.Sent, c.SuppressedConsent)
		}
		wantDelivered(t, e, day, res.PushID, "all")
	})
}
