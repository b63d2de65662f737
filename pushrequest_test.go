package herald

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestNewPush(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 1, 2, 3, 456789, time.UTC)
	later := now.Add(time.Hour)
	app := App{ID: "app", Registered: true, FCMCredentials: []byte("sa"),
		AdSenderName: "Herald", AdSenderContact: "02-000-0000", AdOptOut: "Settings > Notifications"}
	footer, _ := app.AdFooter()
	users := func(ids ...string) []Recipient {
		rs := make([]Recipient, len(ids))
		for i, id := range ids {
			rs[i] = Recipient{UserID: id}
		}
		return rs
	}
	plain, ad := Content{Title: "Hello", Content: "Hi"}, Content{Title: "(광고) Sale", Content: "50%"}
	tests := []struct {
		name string
		app  App
		req  PushRequest
		// want's fields compared: Kind, Status, Marketing, AdFooter,
		// RequestedUsers and ServerActionsHalf.
		want    Push
		wantErr error
	}{
		{"Users", app, PushRequest{Kind: KindUsers, Content: plain, Recipients: users("a", "b", "c")},
			Push{Kind: KindUsers, Status: StatusSending, RequestedUsers: 3, ServerActionsHalf: 3 * HalfPerUser}, nil},
		{"Scheduled", app, PushRequest{Kind: KindUsers, Content: plain, Recipients: users("a"), ScheduledAt: &later},
			Push{Kind: KindUsers, Status: StatusScheduled, RequestedUsers: 1, ServerActionsHalf: HalfPerUser}, nil},
		{"TopicChargedAsItFansOut", app, PushRequest{Kind: KindTopic, Topic: "news", Content: plain},
			Push{Kind: KindTopic, Status: StatusSending}, nil},
		{"MarketingByTitle", app, PushRequest{Kind: KindAll, Content: ad},
			Push{Kind: KindAll, Status: StatusSending, Marketing: true, AdFooter: footer}, nil},
		{"MarketingByOption", app, PushRequest{Kind: KindUsers, Content: plain, Recipients: users("a"), IsMarketingOpt: true},
			Push{Kind: KindUsers, Status: StatusSending, Marketing: true, AdFooter: footer, RequestedUsers: 1, ServerActionsHalf: HalfPerUser}, nil},
		{"MarketingByOneMessage", app, PushRequest{Kind: KindMessages,
			Recipients: []Recipient{{UserID: "a", Content: &plain}, {UserID: "b", Content: &ad}}},
			Push{Kind: KindMessages, Status: StatusSending, Marketing: true, AdFooter: footer, RequestedUsers: 2, ServerActionsHalf: 2 * HalfPerUser}, nil},
		{"NoFooterRuleOff", App{ID: "app", Registered: true, FCMCredentials: []byte("sa"), NoAdPrefixCheck: true},
			PushRequest{Kind: KindAll, Content: ad}, Push{Kind: KindAll, Status: StatusSending, Marketing: true}, nil},
		{"TestToUserFree", app, PushRequest{Kind: KindUsers, Content: plain, Recipients: users("a"), Test: true},
			Push{Kind: KindUsers, Status: StatusSending, RequestedUsers: 1}, nil},
		{"TestToToken", app, PushRequest{Kind: KindToken, Token: "tok", Content: plain, Test: true},
			Push{Kind: KindToken, Status: StatusSending, RequestedUsers: 1}, nil},
		{"ErrAdWithoutFooter", App{ID: "app", Registered: true, FCMCredentials: []byte("sa")},
			PushRequest{Kind: KindAll, Content: ad}, Push{}, ErrInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := NewPush(tt.app, tt.req, now)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("got %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			type decided struct {
				Kind              PushKind
				Status            PushStatus
				Marketing         bool
				AdFooter          string
				Users             int
				ServerActionsHalf int64
			}
			got := decided{p.Kind, p.Status, p.Marketing, p.AdFooter, p.RequestedUsers, p.ServerActionsHalf}
			want := decided{tt.want.Kind, tt.want.Status, tt.want.Marketing, tt.want.AdFooter, tt.want.RequestedUsers, tt.want.ServerActionsHalf}
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			if !strings.HasPrefix(p.ID, "push_") || p.AppID != "app" || !p.CreatedAt.Equal(now.Truncate(time.Millisecond)) {
				t.Errorf("got id %q, app %q, created %v; want a push_ id of app at %v", p.ID, p.AppID, p.CreatedAt, now.Truncate(time.Millisecond))
			}
			if p.Topic != tt.req.Topic || p.Token != tt.req.Token || p.Content != tt.req.Content || p.ScheduledAt != tt.req.ScheduledAt {
				t.Errorf("got topic %q token %q content %+v scheduled %v, want the request's", p.Topic, p.Token, p.Content, p.ScheduledAt)
			}
		})
	}
}

// TestPushGate: an app not registered, or without FCM credentials, may
// not make pushes. (NewPush does not check it again: each way of making
// a push checks it once, where its answer belongs; see PushGate.)
func TestPushGate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		app  App
		want error
	}{
		{"Open", App{ID: "app", Registered: true, FCMCredentials: []byte("sa")}, nil},
		{"ErrAppNotRegistered", App{ID: "app", FCMCredentials: []byte("sa")}, ErrAppNotFound},
		{"ErrNoFCM", App{ID: "app", Registered: true}, ErrNoFCM},
	} {
		if err := PushGate(tt.app); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("%s: got %v, want %v", tt.name, err, tt.want)
		}
	}
}
