package delivery

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

func TestBackoff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		attempt    int
		retryAfter time.Duration
		jitter     float64
		want       time.Duration
	}{
		{1, 0, 0.5, time.Second},
		{2, 0, 0.5, 2 * time.Second},
		{1, 0, 0, 750 * time.Millisecond},
		{1, 0, 1, 1250 * time.Millisecond},
		{1, 60 * time.Second, 0.5, 60 * time.Second},
		{30, 0, 0.5, 10 * time.Minute},
		{11, 0, 0.5, 10 * time.Minute},
	}
	for _, tt := range tests {
		if got := backoff(tt.attempt, tt.retryAfter, tt.jitter); got != tt.want {
			t.Errorf("backoff(%d, %v, %v): got %v, want %v", tt.attempt, tt.retryAfter, tt.jitter, got, tt.want)
		}
	}
}

func TestPlan(t *testing.T) {
	t.Parallel()
	uid := func(s string) *string { return &s }
	dev := func(id string, user string, c herald.Consent) herald.Device {
		return herald.Device{ID: id, Token: "tok-" + id, UserID: uid(user), Consent: c}
	}
	yes, no := herald.Consent{Marketing: true, MarketingNight: true}, herald.Consent{}
	dayOnly := herald.Consent{Marketing: true}
	groups := []recipientDevices{
		{r: herald.Recipient{UserID: "a"}, idx: 0, devices: []herald.Device{dev("a1", "a", yes), dev("a2", "a", no)}},
		{r: herald.Recipient{UserID: "b"}, idx: 1, devices: []herald.Device{dev("b1", "b", dayOnly)}},
		{r: herald.Recipient{UserID: "c"}, idx: 2, devices: []herald.Device{dev("c1", "c", no)}},
		{r: herald.Recipient{UserID: "ghost"}, idx: 3},
	}
	t.Run("MarketingAtNight", func(t *testing.T) {
		p := herald.Push{Content: herald.Content{Title: "(광고) sale"}}
		var to sendstore.FanoutCursor
		ds, _, _ := plan(p, groups, nightRule{now: time.Date(2027, 1, 6, 23, 0, 0, 0, time.UTC), loc: time.UTC}, 1, &to)
		want := []herald.DeliveryState{herald.DeliveryPending, herald.DeliverySuppressedConsent, herald.DeliverySuppressedNight, herald.DeliverySuppressedConsent}
		if len(ds) != len(want) {
			t.Fatalf("got %d deliveries, want %d", len(ds), len(want))
		}
		for i, d := range ds {
			if d.State != want[i] || d.Seq != i {
				t.Errorf("delivery %d: got %s seq %d, want %s seq %d", i, d.State, d.Seq, want[i], i)
			}
		}
		if to.Seq != 4 || to.Chunk != 1 {
			t.Errorf("cursor: got seq %d chunk %d, want 4 and 1", to.Seq, to.Chunk)
		}
	})
	t.Run("ChunkedFromCursor", func(t *testing.T) {
		to := sendstore.FanoutCursor{Seq: 10, Chunk: 3}
		ds, _, _ := plan(herald.Push{Content: herald.Content{Title: "hello"}}, groups, nightRule{now: time.Date(2027, 1, 6, 23, 0, 0, 0, time.UTC), loc: time.UTC}, 2, &to)
		chunks, idx := []int{3, 3, 4, 4}, []int{0, 0, 1, 2}
		for i, d := range ds {
			if d.State != herald.DeliveryPending || d.Seq != 10+i || d.Chunk != chunks[i] || d.RecipientIdx != idx[i] {
				t.Errorf("delivery %d: got %s seq %d chunk %d recipient %d, want pending seq %d chunk %d recipient %d",
					i, d.State, d.Seq, d.Chunk, d.RecipientIdx, 10+i, chunks[i], idx[i])
			}
		}
		if to.Seq != 14 || to.Chunk != 5 {
			t.Errorf("cursor: got seq %d chunk %d, want 14 and 5", to.Seq, to.Chunk)
		}
	})
	t.Run("NothingToSend", func(t *testing.T) {
		to := sendstore.FanoutCursor{Seq: 7, Chunk: 2}
		if ds, _, _ := plan(herald.Push{}, groups[3:], nightRule{}, 2, &to); len(ds) != 0 || to.Seq != 7 || to.Chunk != 2 {
			t.Errorf("got %d deliveries, cursor %+v, want none and the cursor unmoved", len(ds), to)
		}
	})
}

func TestGroupDevices(t *testing.T) {
	t.Parallel()
	dev := func(id, user string) herald.Device {
		d := herald.Device{ID: id}
		if user != "" {
			d.UserID = &user
		}
		return d
	}
	describe := func(gs []recipientDevices) string {
		var out []string
		for _, g := range gs {
			ids := ""
			for _, d := range g.devices {
				ids += d.ID
			}
			out = append(out, fmt.Sprintf("%s#%d:%s", g.r.UserID, g.idx, ids))
		}
		return fmt.Sprint(out)
	}
	tests := []struct {
		name      string
		from      sendstore.FanoutCursor
		list      []herald.Device
		want      string
		wantUsers int
	}{
		{"First", sendstore.FanoutCursor{}, []herald.Device{dev("x", ""), dev("y", ""), dev("a", "u1"), dev("b", "u1"), dev("c", "u2")},
			"[#0:x #1:y u1#2:ab u2#3:c]", 4},
		// u2's devices began on the page before: u2 is not counted again.
		{"UserAcrossPages", sendstore.FanoutCursor{After: sendstore.DeviceCursor{Mapped: true, UserID: "u2", DeviceID: "c"}, Users: 4},
			[]herald.Device{dev("d", "u2"), dev("e", "u2"), dev("f", "u3")}, "[u2#3:de u3#4:f]", 5},
		{"UnmappedThenMapped", sendstore.FanoutCursor{After: sendstore.DeviceCursor{DeviceID: "x"}, Users: 1},
			[]herald.Device{dev("y", ""), dev("a", "u1")}, "[#1:y u1#2:a]", 3},
		{"Empty", sendstore.FanoutCursor{Users: 9}, nil, "[]", 9},
	}
	for _, tt := range tests {
		gs, users := groupDevices(tt.list, tt.from)
		if got := describe(gs); got != tt.want || users != tt.wantUsers {
			t.Errorf("%s: got %s and %d users, want %s and %d", tt.name, got, users, tt.want, tt.wantUsers)
		}
	}
}

func TestWebhookJobs(t *testing.T) {
	t.Parallel()
	s := New(Config{})
	for _, tt := range []struct {
		users int
		want  []int
	}{{0, nil}, {1, []int{1}}, {1000, []int{1000}}, {1001, []int{1000, 1}}, {2345, []int{1000, 1000, 345}}} {
		users := make([]herald.Unreachable, tt.users)
		for i := range users {
			users[i] = herald.Unreachable{UserID: fmt.Sprint(i), Reason: herald.ReasonNoToken}
		}
		var sizes []int
		next := 0
		for i, j := range s.webhookJobs(herald.Push{ID: "push_1", AppID: "app_1"}, users) {
			r := j.(WebhookArgs).Report
			if r.ID != fmt.Sprintf("msg_push_1_%d", i) {
				t.Errorf("report %d: got id %s", i, r.ID)
			}
			sizes = append(sizes, len(r.Users))
			for _, u := range r.Users {
				if u.UserID != fmt.Sprint(next) {
					t.Fatalf("user order: got %s, want %d", u.UserID, next)
				}
				next++
			}
		}
		if fmt.Sprint(sizes) != fmt.Sprint(tt.want) {
			t.Errorf("%d users: got batches %v, want %v", tt.users, sizes, tt.want)
		}
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	fanout := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	alice := "alice"
	dev := func(id, token string, created time.Time) herald.Device {
		return herald.Device{ID: id, Token: token, UserID: &alice, CreatedAt: created}
	}
	planned := herald.Delivery{UserID: "alice", DeviceID: "d1", Token: "t1"}
	before, after := fanout.Add(-time.Hour), fanout.Add(time.Second)
	tests := []struct {
		name      string
		devices   []herald.Device
		wantID    string
		wantToken string
		wantOK    bool
	}{
		{"Unchanged", []herald.Device{dev("d1", "t1", before)}, "d1", "t1", true},
		{"TokenRefreshed", []herald.Device{dev("d1", "t2", before)}, "d1", "t2", true},
		{"Reinstalled", []herald.Device{dev("d9", "t1", after)}, "d9", "t1", true},
		// A device of the user that existed at the fan-out has its own
		// delivery: taking its token over would send twice.
		{"TokenMovedToOlderDevice", []herald.Device{dev("d2", "t1", before)}, "", "", false},
		{"HandedOverOrLoggedOut", nil, "", "", false},
		{"OtherDeviceOnly", []herald.Device{dev("d3", "t3", after)}, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := resolver{personal: true, fannedOut: fanout, ofUser: map[string][]herald.Device{"alice": tt.devices}}
			got, ok := r.resolve(planned)
			if ok != tt.wantOK || got.ID != tt.wantID || got.Token != tt.wantToken {
				t.Errorf("got %s/%s %v, want %s/%s %v", got.ID, got.Token, ok, tt.wantID, tt.wantToken, tt.wantOK)
			}
		})
	}
	t.Run("TopicGoesToTheDevice", func(t *testing.T) {
		bob := "bob"
		r := resolver{byID: map[string]herald.Device{"d1": {ID: "d1", Token: "t2", UserID: &bob}}}
		if got, ok := r.resolve(planned); !ok || got.Token != "t2" {
			t.Errorf("got %+v %v, want d1 with its current token", got, ok)
		}
	})
}
