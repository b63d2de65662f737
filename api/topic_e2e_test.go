package api_test

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
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true})
	e.Register(a, "tok-", "u1", "u2", "u3")
	e.Device(a, "anon-device", "tok-anon", "android", "1.6.0", nil)

	sub := func(path string, body string) map[string]any {
		t.Helper()
		res := e.ServerDo("POST", path, a.Keys(), json.RawMessage(body))
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
		if res := e.ServerDo("POST", "/api/topic/v2/subscribe", a.Keys(), json.RawMessage(bad)); res.Status != http.StatusBadRequest {
			t.Errorf("subscribe %s: got %d, want 400", bad, res.Status)
		}
	}

	t.Run("Topic", func(t *testing.T) {
		res := e.ServerDo("POST", "/api/push/v2/topics", a.Keys(), json.RawMessage(`{"topic":"news","title":"Hi","content":"topic"}`))
		if res.Status != http.StatusOK {
			t.Fatalf("topic push: got %d %s", res.Status, res.Body)
		}
		p := e.WaitFinal(res.Header.Get("X-Push-Id"), 10*time.Second)
		if got := e.SentTo(p.PushID); len(got) != 1 || got["tok-u1"] != 1 {
			t.Fatalf("topic push reached %v, want only tok-u1", got)
		}
		if p.ServerActions != 0.5 || p.Counts.RequestedUsers != 1 {
			t.Fatalf("topic push: got %v SA, %d users, want 0.5 and 1", p.ServerActions, p.Counts.RequestedUsers)
		}
	})
	t.Run("All", func(t *testing.T) {
		res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "warm", Content: "up"})
		if err != nil {
			t.Fatal(err)
		}
		e.WaitFinal(res.PushID, 10*time.Second)
		all := e.ServerDo("POST", "/api/push/v2/all", a.Keys(), json.RawMessage(`{"title":"All","content":"everyone"}`))
		if all.Status != http.StatusOK {
			t.Fatalf("all push: got %d %s", all.Status, all.Body)
		}
		p := e.WaitFinal(all.Header.Get("X-Push-Id"), 10*time.Second)
		if got := e.SentTo(p.PushID); len(got) != 4 {
			t.Fatalf("all push reached %v, want the 4 devices", got)
		}
		// Three users and one device without a user: 4 × 0.5.
		if p.ServerActions != 2 {
			t.Fatalf("all push: got %v SA, want 2", p.ServerActions)
		}
	})
	t.Run("WithdrawalDropsTopics", func(t *testing.T) {
		if _, err := a.Client.DeleteUser(context.Background(), "u1"); err != nil {
			t.Fatal(err)
		}
		res := e.ServerDo("POST", "/api/push/v2/topics", a.Keys(), json.RawMessage(`{"topic":"news","title":"Hi","content":"again"}`))
		p := e.WaitFinal(res.Header.Get("X-Push-Id"), 10*time.Second)
		if got := e.SentTo(p.PushID); len(got) != 0 || p.ServerActions != 0 {
			t.Fatalf("after withdrawal: reached %v for %v SA, want nobody and no charge", got, p.ServerActions)
		}
	})
}
