package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/delivery"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/fcm/fcmtest"
	"github.com/heraldpush/herald/internal/testenv"
)

// TestCrashDuringAllUsersPush kills the server with SIGKILL while an
// all-users push to 25,000 devices (three fan-out pages) is being sent,
// restarts it on the same data directory, and checks that every device
// got the message once (twice only where the server recorded a resend,
// at most one process's sends in flight), that the push ended done with
// its counts, and that its users were charged once.
func TestCrashDuringAllUsersPush(t *testing.T) {
	testenv.SQLiteOnly(t, "a crash of the one process on the embedded store; TestNodes covers PostgreSQL")
	testenv.Long(t, "builds the binary and sends 25,000 messages through a crash")
	t.Parallel() // its own process, data dir and emulator
	const (
		users, killAfter = 25000, 3000
		adminToken       = "ha_crashAllTestAdminToken0123456789abcdefg"
	)
	maxInFlight := delivery.MaxInFlight() // one process's sends in flight
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
