package api_test

import (
	"net/http"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

func TestRateLimit(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1}) // bursts of 2
	app, other := env.BusinessApp(t), env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "tok-1", "u1")
	for i := range 2 {
		if res := env.SetMarketing(t, app, "u1", map[string]any{"marketing": true}); res.Status != http.StatusOK {
			t.Fatalf("request %d: got %d, want 200 within the burst", i, res.Status)
		}
	}
	res := env.SetMarketing(t, app, "u1", map[string]any{"marketing": true})
	testenv.WantError(t, res, "/api/app-user/v2/marketing", herald.ErrTooManyRequests)
	if got := res.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After: got %q, want 1", got)
	}
	// Buckets are per app, and the SDK API is not limited.
	env.RegisterToken(t, app, "d2", "tok-2", "u2")
	env.RegisterToken(t, other, "d1", "tok-1", "u1")
	if res := env.SetMarketing(t, other, "u1", map[string]any{"marketing": true}); res.Status != http.StatusOK {
		t.Fatalf("another app: got %d, want 200", res.Status)
	}
}
