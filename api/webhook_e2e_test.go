package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/webhook"
)

// undeliverable is the body of a push.undeliverable webhook message.
type undeliverable struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      struct {
		AppID          string               `json:"appId"`
		PushID         string               `json:"pushId"`
		RequestGroupID string               `json:"requestGroupId"`
		Users          []herald.Unreachable `json:"users"`
	} `json:"data"`
}

// verified checks a webhook message's signature and decodes it.
func verified(t *testing.T, secret string, h testenv.Hook) undeliverable {
	t.Helper()
	if err := webhook.Verify(secret, h.Header, h.Body, time.Now(), 0); err != nil {
		t.Errorf("signature of %s: got %v, want it to verify", h.Header.Get(webhook.HeaderID), err)
	}
	if ct := h.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type: got %q, want application/json", ct)
	}
	var ev undeliverable
	if err := json.Unmarshal(h.Body, &ev); err != nil {
		t.Fatalf("webhook body %s: %v", h.Body, err)
	}
	return ev
}

// hooksFor returns the messages the receiver got about push id.
func hooksFor(t *testing.T, r *testenv.Receiver, id string) []testenv.Hook {
	t.Helper()
	var out []testenv.Hook
	for _, h := range r.Hooks() {
		var ev undeliverable
		if json.Unmarshal(h.Body, &ev) == nil && ev.Data.PushID == id {
			out = append(out, h)
		}
	}
	return out
}

func TestWebhookUndeliverable(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	recv := testenv.NewReceiver(t, 0)
	secret := e.PutWebhook(a, recv.URL)
	if !strings.HasPrefix(secret, webhook.SecretPrefix) {
		t.Fatalf("secret: got %q, want the whsec_ prefix", secret)
	}
	var app struct{ WebhookURL string }
	if e.AdminJSON("GET", "/admin/v1/apps/"+a.ID, nil, &app); app.WebhookURL != recv.URL {
		t.Errorf("app webhookUrl: got %q, want %q", app.WebhookURL, recv.URL)
	}
	e.Register(a, "wh-", "ok")
	e.Device(a, "dev-gone", "unregistered-gone", "android", "1.6.0", "gone")
	e.Device(a, "dev-stale", "invalid-stale", "android", "1.6.0", "stale")

	// A push that reaches everyone reports nothing.
	quiet, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"ok"}, Title: "t", Content: "c"})
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	e.WaitFinal(quiet.PushID, 10*time.Second)

	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{
		UserIDs: []any{"ok", "gone", "stale", "ghost", 42}, Title: "t", Content: "c",
		Options: &client.Options{RequestGroupID: "wh-group1"},
	})
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	e.WaitFinal(res.PushID, 10*time.Second)
	testenv.WaitFor(t, "the webhook message", 10*time.Second, func() bool { return len(hooksFor(t, recv, res.PushID)) > 0 })

	hooks := hooksFor(t, recv, res.PushID)
	if len(hooks) != 1 {
		t.Fatalf("messages: got %d, want 1", len(hooks))
	}
	ev := verified(t, secret, hooks[0])
	if ev.Type != "push.undeliverable" {
		t.Errorf("type: got %q, want push.undeliverable", ev.Type)
	}
	if ts, err := time.Parse(time.RFC3339, ev.Timestamp); err != nil || time.Since(ts).Abs() > time.Minute {
		t.Errorf("timestamp: got %q (%v), want RFC 3339 near now", ev.Timestamp, err)
	}
	if ev.Data.AppID != a.ID || ev.Data.PushID != res.PushID || ev.Data.RequestGroupID != "wh-group1" {
		t.Errorf("data: got app %q push %q group %q, want %q %q wh-group1", ev.Data.AppID, ev.Data.PushID, ev.Data.RequestGroupID, a.ID, res.PushID)
	}
	got := map[string]string{}
	for _, u := range ev.Data.Users {
		got[u.UserID] = u.Reason
	}
	want := map[string]string{"gone": "APP_DELETED", "stale": "TOKEN_EXPIRED", "ghost": "NO_TOKEN", "42": "NO_TOKEN"}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(ev.Data.Users) != len(want) {
		t.Errorf("users: got %v, want %v", ev.Data.Users, want)
	}
	var raw struct{ Data map[string]json.RawMessage }
	if err := json.Unmarshal(hooks[0].Body, &raw); err != nil || len(raw.Data) != 4 {
		t.Errorf("data members: got %s, want exactly appId, pushId, requestGroupId, users", hooks[0].Body)
	}
	if n := len(hooksFor(t, recv, quiet.PushID)); n != 0 {
		t.Errorf("messages about the push that reached everyone: got %d, want 0", n)
	}

	t.Run("WrongSecretFails", func(t *testing.T) {
		other, _ := webhook.NewSecret()
		if err := webhook.Verify(other, hooks[0].Header, hooks[0].Body, time.Now(), 0); err == nil {
			t.Errorf("verify with another secret: got nil, want an error")
		}
	})
}
