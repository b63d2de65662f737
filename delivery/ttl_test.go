package delivery

import (
	"encoding/json"
	"strconv"
	"testing"
)

// TestPushTTL: options.ttl goes to FCM as android.ttl and the
// apns-expiration header, counted from the send on the service's clock
// (DESIGN 6); 0 is "0s" and "0"; without it neither is set.
func TestPushTTL(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	a := h.newApp(nil)
	h.register(a, "ttl-", "u1")
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
			body := map[string]any{"userIds": []any{"u1"}, "title": "t", "content": tt.name}
			if tt.ttl != nil {
				body["options"] = map[string]any{"ttl": *tt.ttl}
			}
			id := h.push(a, body)
			h.final(id)
			var m sent
			for _, r := range h.messages("ttl-u1") {
				var s sent
				if err := json.Unmarshal(r.raw, &s); err != nil {
					t.Fatal(err)
				}
				if s.Data.PushID == id {
					m = s
				}
			}
			if m.Data.PushID == "" {
				t.Fatalf("no message of push %s at the emulator", id)
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
				if want := strconv.FormatInt(h.clock.Now().Unix()+3600, 10); expiration != want {
					t.Errorf("apns-expiration: got %q, want the send's time plus an hour, %s", expiration, want)
				}
			}
		})
	}
}
