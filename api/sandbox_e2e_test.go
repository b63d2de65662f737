package api_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"

	"github.com/heraldpush/herald/client"
)

// emulatorStats reads the emulator's counters over HTTP.
func (e *env) emulatorStats() (received, accepted int) {
	e.T.Helper()
	resp, err := http.Get(e.EmulatorURL + "/emulator/stats")
	if err != nil {
		e.T.Fatalf("emulator stats: %v", err)
	}
	defer resp.Body.Close()
	var s struct{ Received, Accepted int }
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		e.T.Fatalf("emulator stats: %v", err)
	}
	return s.Received, s.Accepted
}

// TestSandboxApp: a sandbox app's push goes through the whole pipeline
// (keys, validation, history, webhook) and FCM validates each message
// (validate_only) without delivering it; its cost is shown, not charged.
// Out of the sandbox the same push is delivered and charged.
func TestSandboxApp(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(map[string]any{"sandbox": true})
	var app struct{ Sandbox bool }
	if e.AdminJSON("GET", "/admin/v1/apps/"+a.ID, nil, &app); !app.Sandbox {
		t.Fatalf("app: got sandbox false, want true")
	}
	recv := testenv.NewReceiver(t, 0)
	secret := e.PutWebhook(a, recv.URL)
	e.Device(a, "dev-1", "sbx-u1", "android", "1.6.0", "u1")
	e.Device(a, "dev-gone", "unregistered-gone", "android", "1.6.0", "gone")

	wantAdPrefixRefusal(t, e.ServerDo("POST", "/api/push/v2/users", a.Keys(),
		map[string]any{"userIds": []any{"u1"}, "title": "Sale", "content": "c", "options": map[string]any{"isMarketing": true}}), "title")
	r := e.ServerDo("POST", "/api/push/v2/users", a.Keys(), map[string]any{"userIds": []any{"u1", "gone", "ghost"}, "title": "t", "content": "c"})
	if r.Status != http.StatusOK {
		t.Fatalf("push: got %d %s", r.Status, r.Body)
	}
	id := r.Header.Get("X-Push-Id")
	p := e.WaitFinal(id, 10*time.Second)
	if p.Status != "done" || p.Counts.Sent != 1 || p.Counts.Unreachable != 2 || p.ServerActions != 1.5 {
		t.Errorf("push: got %s sent %d unreachable %d cost %v, want done, 1 validated, 2 unreachable, 1.5 shown", p.Status,
			p.Counts.Sent, p.Counts.Unreachable, p.ServerActions)
	}
	if got := e.Received("sbx-u1"); len(got) != 0 {
		t.Errorf("messages delivered to the device: got %d, want none", len(got))
	}
	if received, accepted := e.emulatorStats(); received != 2 || accepted != 1 {
		t.Errorf("FCM requests: got %d, %d accepted; want 2 (one validated, one refused token), 1 accepted", received, accepted)
	}
	if u := e.Usage(a); u != 0 {
		t.Errorf("usage: got %v Server Actions, want 0 (a sandbox is not charged)", u)
	}
	testenv.WaitFor(t, "the webhook message", 10*time.Second, func() bool { return len(hooksFor(t, recv, id)) == 1 })
	if ev := verified(t, secret, hooksFor(t, recv, id)[0]); len(ev.Data.Users) != 2 {
		t.Errorf("webhook: got %v, want the two unreachable users", ev.Data.Users)
	}

	e.PatchApp(a, map[string]any{"sandbox": false})
	live, err := a.Client.PushUsers(t.Context(), client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "t", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	e.WaitFinal(live.PushID, 10*time.Second)
	if got := e.Received("sbx-u1"); len(got) != 1 {
		t.Errorf("out of the sandbox: got %d messages delivered, want 1", len(got))
	}
	if u := e.Usage(a); u != 0.5 {
		t.Errorf("usage out of the sandbox: got %v, want 0.5", u)
	}
}
