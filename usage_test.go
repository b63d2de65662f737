package herald

import (
	"testing"
	"time"
)

func TestCharge(t *testing.T) {
	if _, err := time.LoadLocation("Asia/Seoul"); err != nil {
		t.Skip("no time zone data")
	}
	// 23:30 UTC is 08:30 the next day in Seoul.
	at := time.Date(2026, 3, 1, 23, 30, 0, 0, time.UTC)
	tests := []struct {
		name string
		app  App
		half int64
		want []UsageEntry
	}{
		{"OnLocalDay", App{ID: "app", TimeZone: "Asia/Seoul"}, 5,
			[]UsageEntry{{AppID: "app", PushID: "push", Day: "2026-03-02", Half: 5, At: at}}},
		{"UTCApp", App{ID: "app", TimeZone: "UTC"}, 3,
			[]UsageEntry{{AppID: "app", PushID: "push", Day: "2026-03-01", Half: 3, At: at}}},
		{"UnsetZoneIsSeoul", App{ID: "app"}, 1,
			[]UsageEntry{{AppID: "app", PushID: "push", Day: "2026-03-02", Half: 1, At: at}}},
		{"Nothing", App{ID: "app"}, 0, nil},
		{"SandboxFree", App{ID: "app", Sandbox: true}, 5, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.app.Charge("push", tt.half, at)
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("entry %d: got %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestRefund(t *testing.T) {
	at := time.Date(2026, 3, 1, 23, 30, 0, 0, time.UTC)
	cs := []UsageEntry{{AppID: "app", PushID: "push", Day: "2026-03-02", Half: 5, At: at}}
	later := at.Add(48 * time.Hour)
	rs := Refund(append(cs, UsageEntry{Half: -5}), later)
	if len(rs) != 1 || rs[0].Day != "2026-03-02" || rs[0].Half != -5 || !rs[0].At.Equal(later) {
		t.Errorf("refund: got %+v, want -5 on the charge's day, at the refund time", rs)
	}
}

// TestPushCharge: what a push costs is HalfPerUser for each user of a
// charged kind, nothing for a test to a token or Herald's own notices;
// the ledger takes it on the app's local day, except a sandbox's, whose
// pushes still show their cost.
func TestPushCharge(t *testing.T) {
	if _, err := time.LoadLocation("Asia/Seoul"); err != nil {
		t.Skip("no time zone data")
	}
	at := time.Date(2026, 3, 1, 23, 30, 0, 0, time.UTC) // 08:30 on the 2nd in Seoul
	app := App{ID: "app", TimeZone: "Asia/Seoul"}
	sandbox := App{ID: "app", Sandbox: true}
	tests := []struct {
		name     string
		app      App
		p        Push
		users    int
		wantHalf int64
		wantDay  string // "" for no ledger entry
	}{
		{"Users", app, Push{Kind: KindUsers}, 3, 3 * HalfPerUser, "2026-03-02"},
		{"Messages", app, Push{Kind: KindMessages}, 2, 2 * HalfPerUser, "2026-03-02"},
		{"TopicPage", app, Push{Kind: KindTopic}, 4, 4 * HalfPerUser, "2026-03-02"},
		{"All", app, Push{Kind: KindAll}, 1, HalfPerUser, "2026-03-02"},
		{"NoUsers", app, Push{Kind: KindAll}, 0, 0, ""},
		{"Token", app, Push{Kind: KindToken, Token: "t"}, 1, 0, ""},
		{"ConsentNotice", app, Push{Kind: KindConsentNotice}, 1, 0, ""},
		{"ConsentNoticeToDevice", app, Push{Kind: KindConsentNotice, Token: "t"}, 1, 0, ""},
		{"Reconfirmation", app, Push{Kind: KindReconfirmation}, 5, 0, ""},
		{"SandboxShowsCost", sandbox, Push{Kind: KindUsers}, 3, 3 * HalfPerUser, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.p.ID = "push"
			c := tt.app.PushCharge(tt.p, tt.users, at)
			if c.Half != tt.wantHalf || c.Half != tt.p.Cost(tt.users) {
				t.Errorf("half: got %d (Cost %d), want %d", c.Half, tt.p.Cost(tt.users), tt.wantHalf)
			}
			var want []UsageEntry
			if tt.wantDay != "" {
				want = []UsageEntry{{AppID: "app", PushID: "push", Day: tt.wantDay, Half: tt.wantHalf, At: at}}
			}
			if len(c.Ledger) != len(want) || len(want) == 1 && c.Ledger[0] != want[0] {
				t.Errorf("ledger: got %+v, want %+v", c.Ledger, want)
			}
		})
	}
}
