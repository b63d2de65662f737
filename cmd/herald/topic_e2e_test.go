package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
)

func TestTopicAndAllPushes(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.newApp(map[string]any{"tier": "business", "appUserEnabled": true})
	e.register(a, "tok-", "u1", "u2", "u3")
	e.device(a, "anon-device", "tok-anon", "android", "1.6.0", nil)

	sub := func(path string, body string) map[string]any {
		t.Helper()
		res := e.serverDo("POST", path, a.keys(), json.RawMessage(body))
		if res.Status != http.StatusOK {
			t.Fatalf("%s: got %d %s", path, res.Status, res.Body)
		}
		var out map[string]any
		json.Unmarshal(res.Body, &out)
		return out
	}
	if got := sub("/api/topic/v2/subscribe", `{"topic":"news","userIds":["u1","u2",3]}`); got["devices"] != 2.0 {
		t.Fatalf("subscribe: got %v, want 2 devices", got)
	}
	if got := sub("/api/topic/v2/unsubscribe", `{"topic":"news","userIds":["u2"]}`); got["devices"] != 1.0 {
		t.Fatalf("unsubscribe: got %v, want 1 device", got)
	}
	for _, bad := range []string{`{"topic":"bad topic!","userIds":["u1"]}`, `{"topic":"","userIds":["u1"]}`, `{"topic":"news","userIds":[]}`} {
		if res := e.serverDo("POST", "/api/topic/v2/subscribe", a.keys(), json.RawMessage(bad)); res.Status != http.StatusBadRequest {
			t.Errorf("subscribe %s: got %d, want 400", bad, res.Status)
		}
	}

	t.Run("Topic", func(t *testing.T) {
		res := e.serverDo("POST", "/api/push/v2/topics", a.keys(), json.RawMessage(`{"topic":"news","title":"Hi","content":"topic"}`))
		if res.Status != http.StatusOK {
			t.Fatalf("topic push: got %d %s", res.Status, res.Body)
		}
		p := e.waitFinal(res.Header.Get("X-Push-Id"), 10*time.Second)
		if got := e.sentTo(p.PushID); len(got) != 1 || got["tok-u1"] != 1 {
			t.Fatalf("topic push reached %v, want only tok-u1", got)
		}
		if p.ServerActions != 0.5 || p.Counts.RequestedUsers != 1 {
			t.Fatalf("topic push: got %v SA, %d users, want 0.5 and 1", p.ServerActions, p.Counts.RequestedUsers)
		}
	})
	t.Run("All", func(t *testing.T) {
		res, err := a.c.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "warm", Content: "up"})
		if err != nil {
			t.Fatal(err)
		}
		e.waitFinal(res.PushID, 10*time.Second)
		all := e.serverDo("POST", "/api/push/v2/all", a.keys(), json.RawMessage(`{"title":"All","content":"everyone"}`))
		if all.Status != http.StatusOK {
			t.Fatalf("all push: got %d %s", all.Status, all.Body)
		}
		p := e.waitFinal(all.Header.Get("X-Push-Id"), 10*time.Second)
		if got := e.sentTo(p.PushID); len(got) != 4 {
			t.Fatalf("all push reached %v, want the 4 devices", got)
		}
		// Three users and one device without a user: 4 × 0.5.
		if p.ServerActions != 2 {
			t.Fatalf("all push: got %v SA, want 2", p.ServerActions)
		}
	})
	t.Run("WithdrawalDropsTopics", func(t *testing.T) {
		if _, err := a.c.DeleteUser(context.Background(), "u1"); err != nil {
			t.Fatal(err)
		}
		res := e.serverDo("POST", "/api/push/v2/topics", a.keys(), json.RawMessage(`{"topic":"news","title":"Hi","content":"again"}`))
		p := e.waitFinal(res.Header.Get("X-Push-Id"), 10*time.Second)
		if got := e.sentTo(p.PushID); len(got) != 0 || p.ServerActions != 0 {
			t.Fatalf("after withdrawal: reached %v for %v SA, want nobody and no charge", got, p.ServerActions)
		}
	})
}
