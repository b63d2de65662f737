package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/server"

	"github.com/heraldpush/herald/client"
)

// TestPagedFanout sends an all-users and a topic push whose fan-out reads
// the devices in pages of 7: users with three devices each straddle the
// pages. Every device is reached once, each user is counted and charged
// once, and a user is reported unreachable only when all of its devices,
// read on two pages, were dead.
func TestPagedFanout(t *testing.T) {
	t.Parallel()
	e := start(t, testenv.Options{Overrides: server.Overrides{FanoutPage: 7}})
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true})
	ctx := context.Background()
	register := func(device, token string, user any) {
		t.Helper()
		req := client.RegisterRequest{DeviceID: device, Token: token, Platform: "android", AppSourceVersion: "1.6.0"}
		if user != nil {
			req.UserID = user
		}
		if _, err := a.Client.RegisterPushToken(ctx, req); err != nil {
			t.Fatalf("register %s: %v", device, err)
		}
	}
	var users []any
	tokens := map[string]bool{}
	for u := range 15 {
		user := fmt.Sprintf("user%02d", u)
		users = append(users, user)
		for d := range 3 {
			token := fmt.Sprintf("tok-%s-%d", user, d)
			switch {
			case u == 4: // every device dead: unreachable
				token = "unregistered-" + token
			case u == 9 && d < 2: // two of three dead: reached
				token = "unregistered-" + token
			default:
				tokens[token] = true
			}
			register(fmt.Sprintf("dev-%s-%d", user, d), token, user)
		}
	}
	for d := range 4 {
		token := fmt.Sprintf("tok-anon-%d", d)
		if d == 0 {
			token = "unregistered-" + token // no user to report
		} else {
			tokens[token] = true
		}
		register(fmt.Sprintf("anon-%d", d), token, nil)
	}

	all := e.ServerDo("POST", "/api/push/v2/all", a.Keys(), json.RawMessage(`{"title":"All","content":"everyone"}`))
	if all.Status != http.StatusOK {
		t.Fatalf("all push: got %d %s", all.Status, all.Body)
	}
	p := e.WaitFinal(all.Header.Get("X-Push-Id"), 30*time.Second)
	got := e.SentTo(p.PushID)
	for token := range tokens {
		if got[token] != 1 {
			t.Errorf("token %s got %d messages, want 1", token, got[token])
		}
	}
	if len(got) != len(tokens) {
		t.Errorf("reached %d tokens, want %d", len(got), len(tokens))
	}
	// 15 users and 4 devices without one: 19 × 0.5.
	if p.Status != "done" || p.Counts.RequestedUsers != 19 || p.ServerActions != 9.5 || p.Counts.Tokens != 49 ||
		p.Counts.Sent != len(tokens) || p.Counts.Unreachable != 1 {
		t.Errorf("all push: got %s, %d users, %v SA, counts %+v; want done, 19, 9.5, 49 tokens, %d sent, 1 unreachable",
			p.Status, p.Counts.RequestedUsers, p.ServerActions, p.Counts, len(tokens))
	}
	if len(p.UnreachableUsers) != 1 || p.UnreachableUsers[0].UserID != "user04" {
		t.Errorf("unreachable: got %+v, want user04 only", p.UnreachableUsers)
	}
	if u := e.Usage(a); u != 9.5 {
		t.Errorf("usage: got %v, want 9.5", u)
	}

	// A topic of ten users: 28 devices (the all-users push dropped
	// user09's two dead ones), four pages.
	body, _ := json.Marshal(map[string]any{"topic": "news", "userIds": users[5:]})
	if res := e.ServerDo("POST", "/api/topic/v2/subscribe", a.Keys(), json.RawMessage(body)); res.Status != http.StatusOK {
		t.Fatalf("subscribe: got %d %s", res.Status, res.Body)
	}
	topic := e.ServerDo("POST", "/api/push/v2/topics", a.Keys(), json.RawMessage(`{"topic":"news","title":"Hi","content":"topic"}`))
	if topic.Status != http.StatusOK {
		t.Fatalf("topic push: got %d %s", topic.Status, topic.Body)
	}
	p = e.WaitFinal(topic.Header.Get("X-Push-Id"), 30*time.Second)
	got = e.SentTo(p.PushID)
	if len(got) != 28 || p.Counts.RequestedUsers != 10 || p.ServerActions != 5 || p.Counts.Tokens != 28 || p.Counts.Unreachable != 0 {
		t.Errorf("topic push: reached %d tokens, %d users, %v SA, counts %+v; want 28, 10, 5, 28 tokens, none unreachable",
			len(got), p.Counts.RequestedUsers, p.ServerActions, p.Counts)
	}
	for token, n := range got {
		if n != 1 || !tokens[token] {
			t.Errorf("topic push: %s got %d messages", token, n)
		}
	}
}
