package delivery

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
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
func verified(t *testing.T, m hookMessage) undeliverable {
	t.Helper()
	if err := webhook.Verify(webhookSecret, m.Header, m.Body, time.Now(), 0); err != nil {
		t.Errorf("signature of %s: got %v, want it to verify", m.Header.Get(webhook.HeaderID), err)
	}
	if ct := m.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type: got %q, want application/json", ct)
	}
	var ev undeliverable
	if err := json.Unmarshal(m.Body, &ev); err != nil {
		t.Fatalf("webhook body %s: %v", m.Body, err)
	}
	return ev
}

// hooksFor returns the messages the receiver got about push id.
func (r *hookReceiver) hooksFor(id string) []hookMessage {
	var out []hookMessage
	for _, m := range r.messages() {
		var ev undeliverable
		if json.Unmarshal(m.Body, &ev) == nil && ev.Data.PushID == id {
			out = append(out, m)
		}
	}
	return out
}

// TestWebhookBatches: the 500 unreachable users of a push are reported in
// one message, each once, NO_TOKEN.
func TestWebhookBatches(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	a := h.newApp(nil)
	users := make([]any, 500)
	for i := range users {
		users[i] = fmt.Sprintf("nobody-%d", i)
	}
	id := h.push(a, map[string]any{"userIds": users, "title": "t", "content": "c"})
	h.final(id)
	hooks := h.hook.hooksFor(id)
	if len(hooks) != 1 {
		t.Fatalf("messages: got %d, want 1", len(hooks))
	}
	ev := verified(t, hooks[0])
	seen := map[string]bool{}
	for _, u := range ev.Data.Users {
		if u.Reason != "NO_TOKEN" {
			t.Errorf("reason of %s: got %q, want NO_TOKEN", u.UserID, u.Reason)
		}
		seen[u.UserID] = true
	}
	if len(ev.Data.Users) != 500 || len(seen) != 500 {
		t.Errorf("users: got %d (%d distinct), want 500", len(ev.Data.Users), len(seen))
	}
}

// TestWebhookRetry: a receiver that answers 500 gets the same message (same
// webhook-id, same body) again, at its backoff (about 5 s later).
func TestWebhookRetry(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	h.hook.answer = func(n int) int {
		if n == 0 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	}
	a := h.newApp(nil)
	id := h.pushUsers(a, "nobody")
	if n := len(h.hook.messages()); n != 1 {
		t.Fatalf("before the backoff: got %d messages, want the first alone", n)
	}
	h.advance(10 * time.Second)
	hooks := h.hook.messages()
	if len(hooks) != 2 {
		t.Fatalf("after the backoff: got %d messages, want 2", len(hooks))
	}
	first, second := hooks[0], hooks[1]
	if id1, id2 := first.Header.Get(webhook.HeaderID), second.Header.Get(webhook.HeaderID); id1 == "" || id1 != id2 {
		t.Errorf("webhook-id: got %q then %q, want the same", id1, id2)
	}
	if string(first.Body) != string(second.Body) {
		t.Errorf("body: got %s then %s, want the same bytes", first.Body, second.Body)
	}
	for _, m := range hooks {
		if ev := verified(t, m); ev.Data.PushID != id {
			t.Errorf("pushId: got %q, want %q", ev.Data.PushID, id)
		}
	}
	if p := h.view(id); p.Status != herald.StatusDone {
		t.Errorf("push status: got %s, want done", p.Status)
	}
}
