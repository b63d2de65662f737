package admin_test

import (
	"context"
	"testing"

	"github.com/heraldpush/herald/client"
)

// TestDashboardPushTTL: the push page says each push's options.ttl in
// words (DESIGN 6): its seconds from each send, "now or never" for 0, and
// FCM's default when the push gave none.
func TestDashboardPushTTL(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	a := newDashApp(t, e, b)
	for _, tt := range []struct {
		ttl  *int
		want string
	}{
		{new(3600), `id="push-ttl">3600 s (1h0m0s) from each send<`},
		{new(0), `id="push-ttl">0: delivered now or never<`},
		{nil, `id="push-ttl">FCM&#39;s default (4 weeks)<`},
	} {
		res, err := a.c.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "t", Content: "c",
			Options: &client.Options{TTL: tt.ttl}})
		if err != nil {
			t.Fatal(err)
		}
		_, body := b.get(a.path + "/pushes/" + res.PushID)
		wantIn(t, "push page", body, tt.want)
	}
}
