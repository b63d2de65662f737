package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"

	"github.com/heraldpush/herald/webhook"
)

// consentChange is one entry of GET …/consent-history.
type consentChange struct {
	At                        time.Time
	Source                    string
	DeviceID                  *string
	Marketing, MarketingNight struct{ From, To bool }
}

func (c consentChange) String() string {
	dev := "user"
	if c.DeviceID != nil {
		dev = *c.DeviceID
	}
	return fmt.Sprintf("%s %s %v/%v→%v/%v", c.Source, dev, c.Marketing.From, c.MarketingNight.From, c.Marketing.To, c.MarketingNight.To)
}

// consentHistory reads a user's consent history through the admin API.
func (e *env) consentHistory(a testenv.App, userID string) []consentChange {
	e.T.Helper()
	var out struct {
		UserID  string
		Changes []consentChange
	}
	if code := e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/users/"+url.PathEscape(userID)+"/consent-history", nil, &out); code != http.StatusOK {
		e.T.Fatalf("consent history of %s: got %d, want 200", userID, code)
	}
	if out.UserID != userID {
		e.T.Errorf("consent history: got userId %q, want %q", out.UserID, userID)
	}
	return out.Changes
}

// consentEvent is the body of a consent.changed webhook message.
type consentEvent struct {
	Type      string
	Timestamp string
	Data      struct {
		AppID, UserID             string
		Marketing, MarketingNight bool
		Source                    string
		ChangedAt                 time.Time
	}
}

// verifiedConsent checks a message's signature and decodes it.
func verifiedConsent(t *testing.T, secret string, h testenv.Hook) consentEvent {
	t.Helper()
	if err := webhook.Verify(secret, h.Header, h.Body, time.Now(), 0); err != nil {
		t.Errorf("signature of %s: got %v, want it to verify", h.Header.Get(webhook.HeaderID), err)
	}
	var ev consentEvent
	if err := json.Unmarshal(h.Body, &ev); err != nil {
		t.Fatalf("webhook body %s: %v", h.Body, err)
	}
	var raw struct{ Data map[string]json.RawMessage }
	if err := json.Unmarshal(h.Body, &raw); err != nil || len(raw.Data) != 6 {
		t.Errorf("data members: got %s, want exactly appId, userId, marketing, marketingNight, source, changedAt", h.Body)
	}
	return ev
}

// sdkConsent flips the in-app consent switch of a device.
func (e *env) sdkConsent(a testenv.App, body map[string]any) {
	e.T.Helper()
	if r := e.ServerDo("PATCH", "/api/sdk/v2/consent", map[string]string{"x-api-key": a.APIKey}, body); r.Status != http.StatusOK {
		e.T.Fatalf("SDK consent %v: got %d %s, want 200", body, r.Status, r.Body)
	}
}

// serverConsent sets a user's pair through the Server API.
func (e *env) serverConsent(a testenv.App, userID string, state map[string]bool) {
	e.T.Helper()
	if r := e.ServerDo("PATCH", "/api/app-user/v2/marketing", a.Keys(), map[string]any{"userId": userID, "state": state}); r.Status != http.StatusOK {
		e.T.Fatalf("Server API consent %v: got %d %s, want 200", state, r.Status, r.Body)
	}
}

// TestConsentTrailAndEvents: each source of a consent change, through its
// own HTTP interface, lands in the user's history (kept through
// withdrawal), and every decision reaches the webhook as a signed
// consent.changed event, in order: the first event is refused once, and
// the later ones wait for its retry.
func TestConsentTrailAndEvents(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true,
		"defaultConsent": map[string]bool{"marketing": true, "marketingNight": false}})
	recv := testenv.NewReceiver(t, 1)
	secret := e.PutWebhook(a, recv.URL)

	e.Device(a, "dev-1", "tok-1", "android", "1.6.0", "u1") // app-default
	e.sdkConsent(a, map[string]any{"deviceId": "dev-1", "marketingNight": true})
	e.serverConsent(a, "u1", map[string]bool{"marketing": false})
	if code := e.AdminJSON("PATCH", "/admin/v1/apps/"+a.ID+"/users/u1/consent", map[string]bool{"marketing": true}, nil); code != http.StatusOK {
		t.Fatalf("admin consent: got %d, want 200", code)
	}
	if r := e.ServerDo("DELETE", "/api/app-user/v2", a.Keys(), map[string]any{"userId": "u1"}); r.Status != http.StatusOK {
		t.Fatalf("withdraw: got %d %s", r.Status, r.Body)
	}

	if u := e.UserView(a, "u1"); u.State != "withdrawn" || len(u.Devices) != 0 {
		t.Errorf("user: got %+v, want withdrawn without devices", u)
	}
	got := e.consentHistory(a, "u1")
	want := []string{
		"app-default dev-1 false/false→true/false",
		"sdk dev-1 true/false→true/true",
		"server-api user false/false→false/false",
		"server-api dev-1 true/true→false/false",
		"admin user false/false→true/false",
		"admin dev-1 false/false→true/false",
		"withdrawal user true/false→false/false",
		"withdrawal dev-1 true/false→false/false",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("history:\n got %v\nwant %v", got, want)
	}
	for i := 1; i < len(got); i++ {
		if got[i].At.Before(got[i-1].At) || time.Since(got[i].At).Abs() > time.Minute {
			t.Errorf("change %d at %v: want near now, not before the one before (%v)", i, got[i].At, got[i-1].At)
		}
	}

	// One refusal, its retry about 5 s later, then the other three.
	testenv.WaitFor(t, "five webhook messages", 60*time.Second, func() bool { return len(recv.Hooks()) >= 5 })
	hooks := recv.Hooks()
	if len(hooks) != 5 {
		t.Fatalf("messages: got %d, want 5", len(hooks))
	}
	if id0, id1 := hooks[0].Header.Get(webhook.HeaderID), hooks[1].Header.Get(webhook.HeaderID); id0 == "" || id0 != id1 || string(hooks[0].Body) != string(hooks[1].Body) {
		t.Errorf("the refused event and the next message: got ids %q and %q, want the same message again", id0, id1)
	}
	var order []string
	ids := map[string]bool{}
	for _, h := range hooks[1:] {
		ev := verifiedConsent(t, secret, h)
		if ev.Type != "consent.changed" || ev.Data.AppID != a.ID || ev.Data.UserID != "u1" {
			t.Errorf("event: got type %q app %q user %q, want consent.changed of %s u1", ev.Type, ev.Data.AppID, ev.Data.UserID, a.ID)
		}
		if ts, err := time.Parse(time.RFC3339, ev.Timestamp); err != nil || ts.Unix() != ev.Data.ChangedAt.Unix() {
			t.Errorf("timestamp %q: want RFC 3339, the second of changedAt %v", ev.Timestamp, ev.Data.ChangedAt)
		}
		order = append(order, fmt.Sprintf("%s %v/%v", ev.Data.Source, ev.Data.Marketing, ev.Data.MarketingNight))
		ids[h.Header.Get(webhook.HeaderID)] = true
	}
	wantOrder := []string{"sdk true/true", "server-api false/false", "admin true/false", "withdrawal false/false"}
	if fmt.Sprint(order) != fmt.Sprint(wantOrder) {
		t.Errorf("events in order of arrival:\n got %v\nwant %v", order, wantOrder)
	}
	if len(ids) != 4 {
		t.Errorf("webhook-ids: got %d distinct, want 4", len(ids))
	}
	t.Run("WrongSecretFails", func(t *testing.T) {
		other, _ := webhook.NewSecret()
		if err := webhook.Verify(other, hooks[2].Header, hooks[2].Body, time.Now(), 0); err == nil {
			t.Error("verify with another secret: got nil, want an error")
		}
	})
}

// dueUser is one user of GET …/consent-due.
type dueUser struct {
	UserID                    string
	Marketing, MarketingNight bool
	ConfirmedAt, DueAt        time.Time
}

// consentDue reads one page of the consent-due list.
func (e *env) consentDue(a testenv.App, query string) ([]dueUser, *string) {
	e.T.Helper()
	var out struct {
		Users      []dueUser
		NextCursor *string
	}
	if code := e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/consent-due"+query, nil, &out); code != http.StatusOK {
		e.T.Fatalf("consent-due%s: got %d, want 200", query, code)
	}
	return out.Users, out.NextCursor
}

func dueIDs(us []dueUser) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.UserID
	}
	return out
}

// TestConsentDue: consent given through the Server API and through the
// SDK is due for re-confirmation exactly two calendar years later, in the
// app's zone (listed from that instant, not a millisecond before); the
// list pages; setting the same value again, through either API, is
// recorded and takes the user off the list.
func TestConsentDue(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	given := time.Date(2024, 2, 29, 12, 0, 0, 0, testenv.Seoul) // a leap day: due on 1 March
	clk.Freeze(given)
	e := start(t, testenv.Clocked(clk))
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true})
	e.Device(a, "dev-1", "tok-1", "android", "1.6.0", "u1")
	e.Device(a, "dev-2", "tok-2", "android", "1.6.0", "u2")
	e.Device(a, "dev-3", "tok-3", "android", "1.6.0", "u3")
	e.serverConsent(a, "u1", map[string]bool{"marketing": true, "marketingNight": true})
	clk.Freeze(given.Add(time.Hour))
	e.sdkConsent(a, map[string]any{"deviceId": "dev-2", "marketing": true})
	e.serverConsent(a, "u3", map[string]bool{"marketing": false}) // refused: never due

	due := time.Date(2026, 3, 1, 12, 0, 0, 0, testenv.Seoul)
	clk.Freeze(due.Add(-time.Millisecond))
	if us, _ := e.consentDue(a, ""); len(us) != 0 {
		t.Errorf("a millisecond before two years: got %v, want nobody", dueIDs(us))
	}
	clk.Freeze(due)
	us, next := e.consentDue(a, "")
	if len(us) != 1 || next != nil {
		t.Fatalf("at exactly two years: got %v (next %v), want u1 alone", dueIDs(us), next)
	}
	if u := us[0]; u.UserID != "u1" || !u.Marketing || !u.MarketingNight || !u.ConfirmedAt.Equal(given) || !u.DueAt.Equal(due) {
		t.Errorf("got %+v, want u1 with both consents, confirmed %v, due %v", u, given, due)
	}

	// Within a day u2 is due too; a page of one at a time.
	first, next := e.consentDue(a, "?within=1d&limit=1")
	if next == nil {
		t.Fatalf("first page: got %v and no cursor, want a next page", dueIDs(first))
	}
	second, last := e.consentDue(a, "?within=1d&limit=1&cursor="+url.QueryEscape(*next))
	if got := append(dueIDs(first), dueIDs(second)...); fmt.Sprint(got) != "[u1 u2]" || last != nil {
		t.Errorf("pages: got %v (last cursor %v), want [u1 u2] and no more", got, last)
	}
	if second[0].MarketingNight || !second[0].Marketing {
		t.Errorf("u2: got %+v, want marketing without night (its device's switch)", second[0])
	}

	// Re-confirmation: the same value again, through each API.
	e.serverConsent(a, "u1", map[string]bool{"marketing": true, "marketingNight": true})
	e.sdkConsent(a, map[string]any{"deviceId": "dev-2", "marketing": true})
	if us, _ := e.consentDue(a, "?within=1d"); len(us) != 0 {
		t.Errorf("after re-confirmation: got %v, want nobody", dueIDs(us))
	}
	if us, _ := e.consentDue(a, "?within=731d"); fmt.Sprint(dueIDs(us)) != "[u1 u2]" || !us[0].ConfirmedAt.Equal(due) {
		t.Errorf("two years on: got %+v, want u1 and u2 confirmed %v", us, due)
	}
	// The records of two years ago may be gone by now: the daily
	// retention run, which the clock's jump of two years made due, prunes
	// the records older than the trail's 730 days that are not their
	// pair's latest. The re-confirmation is last either way.
	wantLast := func(user, want string) {
		t.Helper()
		h := e.consentHistory(a, user)
		if n := len(h); n == 0 || h[n-1].String() != want || !h[n-1].At.Equal(due) {
			t.Errorf("%s's history: got %v, want %q last, at %v", user, h, want, due)
		}
	}
	wantLast("u1", "server-api user true/true→true/true")
	wantLast("u2", "sdk dev-2 true/false→true/false")
}
