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

// TestNewPushLedger: the accept's ledger entries are made with the push,
// on the app's local day (the store writes them as given); a sandbox's
// push and a test push write none, the sandbox's showing its cost.
func TestNewPushLedger(t *testing.T) {
	t.Parallel()
	if _, err := time.LoadLocation("Asia/Seoul"); err != nil {
		t.Skip("no time zone data")
	}
	now := time.Date(2026, 3, 1, 23, 30, 0, 0, time.UTC) // 08:30 on the 2nd in Seoul
	app := App{ID: "app", Registered: true, FCMCredentials: []byte("sa"), TimeZone: "Asia/Seoul"}
	req := PushRequest{Kind: KindUsers, Content: Content{Title: "t", Content: "c"}, Recipients: []Recipient{{UserID: "a"}, {UserID: "b"}}}
	p, err := NewPush(app, req, now)
	if err != nil {
		t.Fatal(err)
	}
	want := UsageEntry{AppID: "app", PushID: p.ID, Day: "2026-03-02", Half: 2 * HalfPerUser, At: p.CreatedAt}
	if len(p.Ledger) != 1 || p.Ledger[0] != want || p.ServerActionsHalf != want.Half {
		t.Errorf("charged: got %d, ledger %+v; want %d, [%+v]", p.ServerActionsHalf, p.Ledger, want.Half, want)
	}
	sandbox := app
	sandbox.Sandbox = true
	if p, _ := NewPush(sandbox, req, now); len(p.Ledger) != 0 || p.ServerActionsHalf != 2*HalfPerUser {
		t.Errorf("sandbox: got %d, ledger %+v; want the cost shown, no ledger", p.ServerActionsHalf, p.Ledger)
	}
	req.Test = true
	if p, _ := NewPush(app, req, now); len(p.Ledger) != 0 || p.ServerActionsHalf != 0 {
		t.Errorf("test push: got %d, ledger %+v; want nothing", p.ServerActionsHalf, p.Ledger)
	}
}

// TestNoticeConstructors: Herald's own notices are made by the builder
// NewPush uses: sending, not charged, never marketing (whatever their
// template's title), one requested user for a notice to a user or a
// device, each due user for a re-confirmation run.
func TestNoticeConstructors(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 1, 2, 3, 456789, time.UTC)
	app := App{ID: "app", Name: "Shop", ConsentNotice: ConsentNotice{Title: "(광고) {app}"},
		Reconfirmation: Reconfirmation{Title: "(광고) again"}}
	u := "u1"
	rec := ConsentRecord{AppID: "app", UserID: &u, At: now, To: Consent{Marketing: true}}
	p, rs := NewConsentNotice(app, "push_n", rec, "", now)
	if p.ID != "push_n" || p.Kind != KindConsentNotice || p.Status != StatusSending || p.RequestedUsers != 1 || len(rs) != 1 ||
		rs[0].UserID != "u1" || p.ServerActionsHalf != 0 || len(p.Ledger) != 0 || p.Marketing || p.Content != app.NoticeContent(rec.To, rec.At) ||
		!p.CreatedAt.Equal(now.Truncate(time.Millisecond)) {
		t.Errorf("notice to a user: got %+v, %+v", p, rs)
	}
	rec.UserID = nil
	p, rs = NewConsentNotice(app, "push_d", rec, "tok", now)
	if p.Token != "tok" || p.RequestedUsers != 1 || len(rs) != 0 || !p.Rule().Targeted || p.ServerActionsHalf != 0 {
		t.Errorf("notice to a device: got %+v, %+v", p, rs)
	}
	due := []Recipient{{UserID: "a"}, {UserID: "b"}}
	r := NewReconfirmation(app, due, now)
	if r.Kind != KindReconfirmation || r.RequestedUsers != 2 || r.ServerActionsHalf != 0 || r.Marketing ||
		r.Content.Title != "(광고) again" || r.Content.Content != DefaultReconfirmationContent || r.ID == "" {
		t.Errorf("re-confirmation: got %+v", r)
	}
}
