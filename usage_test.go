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
