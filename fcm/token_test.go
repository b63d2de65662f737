package fcm_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/fcm"
	"github.com/heraldpush/herald/fcm/fcmtest"
)

// fakeClock is a clock a test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) Advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// shortTokens is a token endpoint whose tokens live lifetime on clock and
// an FCM send endpoint that refuses an expired one; it counts the fetches.
type shortTokens struct {
	clock    *fakeClock
	lifetime time.Duration

	mu      sync.Mutex
	fetches int
	expiry  map[string]time.Time // by access token
	expired int                  // sends with an expired token
}

func (s *shortTokens) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.URL.Path == "/token" {
		s.fetches++
		tok := fmt.Sprintf("short-%d", s.fetches)
		s.expiry[tok] = s.clock.Now().Add(s.lifetime)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": s.lifetime.Seconds()})
		return
	}
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if exp, ok := s.expiry[tok]; !ok || !s.clock.Now().Before(exp) {
		s.expired++
		http.Error(w, `{"error":{"code":401,"status":"UNAUTHENTICATED"}}`, http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"name":"projects/p/messages/1"}`))
}

// TestShortLivedTokenRefreshedAhead: a token endpoint answering
// expires_in: 5 gets a fetch per half lifetime, not one per send (the
// default margin, a minute, is longer than the token lives), and no send
// goes out with an expired token. Sends come a second apart on the
// client's clock.
func TestShortLivedTokenRefreshedAhead(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
	srv := &shortTokens{clock: clock, lifetime: 5 * time.Second, expiry: map[string]time.Time{}}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.Protocols = new(http.Protocols)
	ts.Config.Protocols.SetHTTP1(true)
	ts.Config.Protocols.SetUnencryptedHTTP2(true) // the client speaks h2c to an http:// endpoint
	ts.Start()
	defer ts.Close()
	client := fcm.NewClient(ts.URL, fcm.ClientOptions{AllowAnyTokenURI: true, Now: clock.Now})
	defer client.Close()
	cred := fcm.Credentials{Key: "short/v1", JSON: fcmtest.ServiceAccountJSON(t, "p", ts.URL+"/token")}
	const sends = 12
	for i := range sends {
		if err := client.Send(t.Context(), cred, message(fmt.Sprintf("tok-%d", i))); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		clock.Advance(time.Second)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	// a token lives 5 s and is replaced after 2.5 s: fetched at 0, 3, 6 and 9 s
	if srv.fetches != 4 {
		t.Errorf("token fetches for %d sends a second apart: got %d, want 4", sends, srv.fetches)
	}
	if srv.expired != 0 {
		t.Errorf("sends with an expired token: got %d, want 0", srv.expired)
	}
}

// TestLongLivedTokenKept: an hour's token is fetched once for sends over
// 58 minutes, and again once it is within the margin (a minute) of its
// expiry.
func TestLongLivedTokenKept(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
	srv := &shortTokens{clock: clock, lifetime: time.Hour, expiry: map[string]time.Time{}}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.Protocols = new(http.Protocols)
	ts.Config.Protocols.SetHTTP1(true)
	ts.Config.Protocols.SetUnencryptedHTTP2(true)
	ts.Start()
	defer ts.Close()
	client := fcm.NewClient(ts.URL, fcm.ClientOptions{AllowAnyTokenURI: true, Now: clock.Now})
	defer client.Close()
	cred := fcm.Credentials{Key: "long/v1", JSON: fcmtest.ServiceAccountJSON(t, "p", ts.URL+"/token")}
	fetchesAfter := func(step time.Duration) int {
		t.Helper()
		clock.Advance(step)
		if err := client.Send(t.Context(), cred, message("tok")); err != nil {
			t.Fatal(err)
		}
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return srv.fetches
	}
	if got := fetchesAfter(0); got != 1 {
		t.Fatalf("first send: got %d fetches, want 1", got)
	}
	if got := fetchesAfter(58 * time.Minute); got != 1 {
		t.Errorf("send at 58 min: got %d fetches, want 1 (the token kept)", got)
	}
	if got := fetchesAfter(90 * time.Second); got != 2 {
		t.Errorf("send at 59.5 min: got %d fetches, want 2 (refreshed within the margin)", got)
	}
}
