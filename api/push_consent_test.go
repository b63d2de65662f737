package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"

	"github.com/heraldpush/herald/client"
)

func TestPushConsentAndNight(t *testing.T) {
	t.Parallel()
	e := start(t)
	now := time.Now()
	// 02:xx and 14:xx leave hours of margin to the 21:00 and 08:00 edges.
	night := testenv.ConsentApp(t, e.Harness, testenv.ZoneWithHour(t, now, 2))
	day := testenv.ConsentApp(t, e.Harness, testenv.ZoneWithHour(t, now, 14))
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
			testenv.WantDelivered(t, e.Harness, tt.app, res.PushID, tt.wantTo...)
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
		testenv.WantDelivered(t, e.Harness, night, res.PushID, "all")
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
		testenv.WantDelivered(t, e.Harness, night, res.PushID, "day", "none")
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
		testenv.WantDelivered(t, e.Harness, day, res.PushID, "all")
	})
}
