package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/fcm/fcmtest"
)

// TestPagedFanout sends an all-users and a topic push whose fan-out reads
// the devices in pages of 7: users with three devices each straddle the
// pages. Every device is reached once, each user is counted and charged
// once, and a user is reported unreachable only when all of its devices,
// read on two pages, were dead.
func TestPagedFanout(t *testing.T) {
	t.Parallel()
	e := start(t, func(c *config) { c.fanoutPage = 7 })
	a := e.newApp(map[string]any{"tier": "business", "appUserEnabled": true})
	ctx := context.Background()
	register := func(device, token string, user any) {
		t.Helper()
		req := client.RegisterRequest{DeviceID: device, Token: token, Platform: "android", AppSourceVersion: "1.6.0"}
		if user != nil {
			req.UserID = user
		}
		if _, err := a.c.RegisterPushToken(ctx, req); err != nil {
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

	all := e.serverDo("POST", "/api/push/v2/all", a.keys(), json.RawMessage(`{"title":"All","content":"everyone"}`))
	if all.Status != http.StatusOK {
		t.Fatalf("all push: got %d %s", all.Status, all.Body)
	}
	p := e.waitFinal(all.Header.Get("X-Push-Id"), 30*time.Second)
	got := e.sentTo(p.PushID)
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
	if u := e.usage(a); u != 9.5 {
		t.Errorf("usage: got %v, want 9.5", u)
	}

	// A topic of ten users: 28 devices (the all-users push dropped
	// user09's two dead ones), four pages.
	body, _ := json.Marshal(map[string]any{"topic": "news", "userIds": users[5:]})
	if res := e.serverDo("POST", "/api/topic/v2/subscribe", a.keys(), json.RawMessage(body)); res.Status != http.StatusOK {
		t.Fatalf("subscribe: got %d %s", res.Status, res.Body)
	}
	topic := e.serverDo("POST", "/api/push/v2/topics", a.keys(), json.RawMessage(`{"topic":"news","title":"Hi","content":"topic"}`))
	if topic.Status != http.StatusOK {
		t.Fatalf("topic push: got %d %s", topic.Status, topic.Body)
	}
	p = e.waitFinal(topic.Header.Get("X-Push-Id"), 30*time.Second)
	got = e.sentTo(p.PushID)
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

// TestCrashDuringAllUsersPush kills the server with SIGKILL while an
// all-users push to 25,000 devices (three fan-out pages) is being sent,
// restarts it on the same data directory, and checks that every device
// got the message once (twice only where the server recorded a resend,
// at most one process's sends in flight), that the push ended done with
// its counts, and that its users were charged once.
func TestCrashDuringAllUsersPush(t *testing.T) {
	sqliteOnly(t, "a crash of the one process on the embedded store; TestNodes covers PostgreSQL")
	if testing.Short() {
		t.Skip("builds the binary and sends 25,000 messages")
	}
	t.Parallel() // its own process, data dir and emulator
	const (
		users, killAfter, maxInFlight = 25000, 3000, 500
		adminToken                    = "ha_crashAllTestAdminToken0123456789abcdefg"
	)
	bin := buildHerald(t)
	emu, emuURL := fcmtest.StartEmulator(t, emulator.Options{Latency: 2 * time.Millisecond})
	dataDir := t.TempDir()
	proc := startProcess(t, bin, dataDir, adminToken, emuURL)
	app := proc.newApp(adminToken, "crash-all", emuURL)
	c := client.New(proc.publicURL, app.APIKey, app.SecretKey, nil)
	registerAll(t, c, users, 32)

	res, err := c.PushAll(context.Background(), client.PushAllRequest{Title: "crash", Content: "all, once"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, fmt.Sprintf("%d accepted messages", killAfter), 60*time.Second, func() bool { return emu.Stats().Accepted >= killAfter })
	proc.kill()
	if atKill := emu.Stats().Accepted; atKill >= users {
		t.Fatalf("accepted at kill: got %d, want fewer than %d (the push ended before the kill)", atKill, users)
	}

	proc = startProcess(t, bin, dataDir, adminToken, emuURL)
	waitFor(t, "every token to get a message", 90*time.Second, func() bool { return len(emu.CountByToken()) == users })
	var p pushView
	waitFor(t, "the push to be done", 30*time.Second, func() bool {
		proc.adminJSON(adminToken, "GET", "/admin/v1/pushes/"+res.PushID, nil, &p)
		return p.Status == "done"
	})
	var usage struct{ TotalServerActions float64 }
	proc.adminJSON(adminToken, "GET", "/admin/v1/apps/"+app.AppID+"/usage", nil, &usage)
	proc.stop()

	if p.Counts.RequestedUsers != users || p.Counts.Tokens != users || p.Counts.Sent != users || p.ServerActions != users/2 ||
		usage.TotalServerActions != users/2 {
		t.Errorf("push: got %d users, counts %+v, %v SA, usage %v; want %d users, tokens and sent, %d SA charged once",
			p.Counts.RequestedUsers, p.Counts, p.ServerActions, usage.TotalServerActions, users, users/2)
	}
	resent := resentTokens(t, filepath.Join(dataDir, "herald.db"))
	wrong := 0
	for token, n := range emu.CountByToken() {
		if n != 1 && (n != 2 || !resent[token]) {
			if wrong++; wrong <= 10 {
				t.Errorf("token %s: got %d messages, want 1 (resent recorded: %v)", token, n, resent[token])
			}
		}
	}
	if len(resent) > maxInFlight {
		t.Errorf("deliveries recorded as resent: got %d, want at most %d (the sends in flight at the kill)", len(resent), maxInFlight)
	}
	t.Logf("resent recorded: %d tokens", len(resent))
}
