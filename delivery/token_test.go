package delivery

import (
	"context"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// tokenStore holds devices by token and by id, for a token push's fan-out
// and send-time resolution.
type tokenStore struct {
	Store   // nil: any other method panics
	devices []herald.Device
}

func (s *tokenStore) DeviceByToken(_ context.Context, _, token string) (herald.Device, error) {
	for _, d := range s.devices {
		if d.Token == token {
			return d, nil
		}
	}
	return herald.Device{}, herald.ErrNotFound
}

func (s *tokenStore) DevicesByID(_ context.Context, _ string, ids []string) (map[string]herald.Device, error) {
	out := map[string]herald.Device{}
	for _, d := range s.devices {
		for _, id := range ids {
			if d.ID == id {
				out[id] = d
			}
		}
	}
	return out, nil
}

// TestTokenFanout: a token push's fan-out plans one delivery to the device
// that holds the token, under its user or none, charges nothing and counts
// no users on the cursor; a token no device holds plans nothing.
func TestTokenFanout(t *testing.T) {
	t.Parallel()
	u1 := "u1"
	store := &tokenStore{devices: []herald.Device{
		{ID: "d1", Token: "t1", UserID: &u1}, {ID: "d2", Token: "t2", UserID: &u1}, {ID: "d3", Token: "t3"},
	}}
	s := New(Config{Store: store})
	tests := []struct {
		token, wantDevice, wantUser string
		wantJobs                    int
	}{
		{"t2", "d2", "u1", 0}, // a lone chunk: its fan-out's job sends it
		{"t3", "d3", "", 0},
		{"t-unknown", "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.token, func(t *testing.T) {
			p := herald.Push{ID: "push_1", AppID: "app_1", Kind: herald.KindToken, Token: tt.token, RequestedUsers: 1}
			f, err := s.fanoutPage(context.Background(), herald.App{ID: "app_1"}, p, nil, sendstore.FanoutCursor{}, nightRule{loc: time.UTC}, true)
			if err != nil {
				t.Fatalf("fanoutPage: %v", err)
			}
			if f.More || f.Charge.Half != 0 || f.To.Users != 0 || len(f.Jobs) != tt.wantJobs {
				t.Errorf("fan-out: got more %v, charge %d, users %d, %d jobs; want false, 0, 0, %d",
					f.More, f.Charge.Half, f.To.Users, len(f.Jobs), tt.wantJobs)
			}
			if tt.wantDevice == "" {
				if len(f.Deliveries) != 0 {
					t.Errorf("deliveries: got %+v, want none", f.Deliveries)
				}
				return
			}
			if len(f.Deliveries) != 1 {
				t.Fatalf("deliveries: got %d, want 1", len(f.Deliveries))
			}
			d := f.Deliveries[0]
			if d.DeviceID != tt.wantDevice || d.Token != tt.token || d.UserID != tt.wantUser || d.RecipientIdx != 0 ||
				d.State != herald.DeliveryPending || d.Chunk != 0 {
				t.Errorf("delivery: got %+v, want %s/%s of %q, pending in chunk 0", d, tt.wantDevice, tt.token, tt.wantUser)
			}
		})
	}
}

// TestTokenPushResolver: a token push goes to the device whoever uses it
// at send time (not to the user it was planned under), with the token the
// device holds then, so the old token is not sent to; a device gone is
// not sent to.
func TestTokenPushResolver(t *testing.T) {
	t.Parallel()
	u2 := "u2"
	store := &tokenStore{devices: []herald.Device{{ID: "d1", Token: "t1-refreshed", UserID: &u2}}}
	c := &chunk{s: New(Config{Store: store}), app: herald.App{ID: "app_1"}, push: herald.Push{ID: "push_1", Kind: herald.KindToken}}
	planned := []herald.Delivery{{UserID: "u1", DeviceID: "d1", Token: "t1"}, {UserID: "u1", DeviceID: "d-gone", Token: "t9"}}
	r, err := c.resolver(context.Background(), planned)
	if err != nil {
		t.Fatalf("resolver: %v", err)
	}
	if r.personal {
		t.Fatalf("resolver: personal for a token push, want it to go to the device")
	}
	if got, ok := r.resolve(planned[0]); !ok || got.ID != "d1" || got.Token != "t1-refreshed" {
		t.Errorf("moved device: got %s/%s %v, want d1/t1-refreshed true", got.ID, got.Token, ok)
	}
	if got, ok := r.resolve(planned[1]); ok {
		t.Errorf("device gone: got %+v, want none", got)
	}
}
