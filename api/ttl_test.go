package api_test

import (
	"context"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
)

// TestPushTTL: the push JSON carries options.ttl (null when absent), and a
// bad value is refused naming options.ttl, with nothing stored or charged.
// What FCM is sent of it is delivery's TestPushTTL.
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

	for _, tt := range []struct {
		name string
		ttl  *int
	}{{"hour", new(3600)}, {"zero", new(0)}, {"absent", nil}} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "t", Content: tt.name,
				Options: &client.Options{TTL: tt.ttl}})
			if err != nil {
				t.Fatal(err)
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
