package api_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
)

// TestPushTTL: options.ttl goes to FCM as android.ttl and the
// apns-expiration header, counted from the send (DESIGN 6); 0 is "0s" and
// "0"; without it neither is set. The push JSON carries it (null when
// absent), and a bad value is refused naming options.ttl, with nothing
// stored or charged.
func TestPushTTL(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(map[string]any{"tier": "business"})
	e.Register(a, "ttl-", "u1")
	ctx := context.Background()

	bad := e.ServerDo("POST", "/api/push/v2/users", a.Keys(), map[string]any{"userIds": []any{"u1"}, "title": "t", "content": "c",
		"options": map[string]any{"ttl": herald.MaxTTL + 1}})
	if got := testenv.WantError(t, bad, "/api/push/v2/users", herald.ErrInvalidRequest); len(got.Details) != 1 || got.Details[0].Field != "options.ttl" {
		t.Fatalf("ttl over 28 days: got %s, want 400 naming options.ttl", bad.Body)
	}
	if got := e.PushList(a); len(got) != 0 || e.Usage(a) != 0 {
		t.Fatalf("a refused push: %d pushes stored, %v Server Actions charged; want none", len(got), e.Usage(a))
	}

	type sent struct {
		Data    struct{ PushID string }
		Android struct{ TTL *string }
		APNS    struct{ Headers map[string]string }
	}
	for _, tt := range []struct {
		name string
		ttl  *int
	}{{"hour", new(3600)}, {"zero", new(0)}, {"absent", nil}} {
		t.Run(tt.name, func(t *testing.T) {
			before := time.Now()
			res, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "t", Content: tt.name,
				Options: &client.Options{TTL: tt.ttl}})
			if err != nil {
				t.Fatal(err)
			}
			e.WaitFinal(res.PushID, 10*time.Second)
			after := time.Now()
			var m sent
			for _, r := range e.Received("ttl-u1") {
				var s sent
				if err := json.Unmarshal(r.Message, &s); err != nil {
					t.Fatal(err)
				}
				if s.Data.PushID == res.PushID {
					m = s
				}
			}
			if m.Data.PushID == "" {
				t.Fatalf("no message of push %s at the emulator", res.PushID)
			}
			expiration, hasExpiration := m.APNS.Headers["apns-expiration"]
			switch {
			case tt.ttl == nil:
				if m.Android.TTL != nil || hasExpiration {
					t.Errorf("no ttl: got android.ttl %v, apns-expiration %q; want neither", m.Android.TTL, expiration)
				}
			case *tt.ttl == 0:
				if m.Android.TTL == nil || *m.Android.TTL != "0s" || expiration != "0" {
					t.Errorf("ttl 0: got android.ttl %v, apns-expiration %q; want 0s and 0", m.Android.TTL, expiration)
				}
			default:
				if m.Android.TTL == nil || *m.Android.TTL != "3600s" {
					t.Errorf("android.ttl: got %v, want 3600s", m.Android.TTL)
				}
				at, err := strconv.ParseInt(expiration, 10, 64)
				if lo, hi := before.Unix()+3600, after.Unix()+3600; err != nil || at < lo || at > hi {
					t.Errorf("apns-expiration: got %q, want the send's time plus an hour, in [%d, %d]", expiration, lo, hi)
				}
			}
			p := e.pushJSON(res.PushID)
			if want := any(nil); tt.ttl != nil {
				if p["ttl"] != float64(*tt.ttl) {
					t.Errorf("push JSON ttl: got %#v, want %d", p["ttl"], *tt.ttl)
				}
			} else if v, ok := p["ttl"]; !ok || v != want {
				t.Errorf("push JSON ttl: got %#v (present %v), want null", v, ok)
			}
		})
	}
}
