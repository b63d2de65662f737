package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/fcm/fcmtest"
	"github.com/heraldpush/herald/internal/testenv"
)

// TestGracefulStopMidFanout stops `herald serve` with SIGTERM while a
// fan-out runs: running chunks finish and commit, the rest wait in the
// database, and after a restart every token has exactly one message and
// none is recorded as resent.
func TestGracefulStopMidFanout(t *testing.T) {
	testenv.SQLiteOnly(t, "a stop of the one process on the embedded store")
	if testing.Short() {
		t.Skip("builds the binary and sends 5,000 messages")
	}
	t.Parallel()
	const (
		users      = 5000
		adminToken = "ha_gracefulTestAdminToken0123456789abcdefgh"
	)
	bin := buildHerald(t)
	emu, emuURL := fcmtest.StartEmulator(t, emulator.Options{Latency: 5 * time.Millisecond})
	dataDir := t.TempDir()
	proc := startProcess(t, bin, dataDir, adminToken, emuURL)
	app := proc.newApp(adminToken, "graceful", emuURL)
	c := client.New(proc.publicURL, app.APIKey, app.SecretKey, nil)
	registerAll(t, c, users, 32)
	for n := range users / 500 {
		ids := make([]any, 500)
		for i := range ids {
			ids[i] = fmt.Sprintf("u%d", n*500+i)
		}
		if _, err := c.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: ids, Title: "graceful", Content: "once"}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the fan-out to be under way", 60*time.Second, func() bool { return emu.Stats().Accepted > 0 })
	proc.stop()
	atStop := emu.Stats().Accepted
	t.Logf("stopped with %d of %d messages accepted", atStop, users)

	proc = startProcess(t, bin, dataDir, adminToken, emuURL)
	waitFor(t, "every token to get a message", 60*time.Second, func() bool { return len(emu.CountByToken()) == users })
	var list struct{ Pushes []struct{ Status string } }
	waitFor(t, "every push to be done", 30*time.Second, func() bool {
		proc.adminJSON(adminToken, "GET", "/admin/v1/apps/"+app.AppID+"/pushes?limit=200", nil, &list)
		for _, p := range list.Pushes {
			if p.Status != "done" {
				return false
			}
		}
		return len(list.Pushes) == users/500
	})
	proc.stop()
	for token, n := range emu.CountByToken() {
		if n != 1 {
			t.Errorf("token %s: got %d messages, want 1", token, n)
		}
	}
	if resent := resentTokens(t, filepath.Join(dataDir, "herald.db")); len(resent) != 0 {
		t.Errorf("resent after a graceful stop: got %d tokens, want 0", len(resent))
	}
}
