package main

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/fcm/fcmtest"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/postgres/pgtest"
)

// TestDatabaseRestartMidPush (PostgreSQL): the database goes away for 0.4 s
// (every connection closed, new ones refused, as a restart does) while a
// 2,000-user push is being sent. Every token is reached; the sends FCM had
// answered are settled once the database is back, so a token gets a
// second message only where a resend is recorded, and those are at most
// the sends that were on their way and not yet answered (before, every
// fault resent the node's whole window: 500 sends).
func TestDatabaseRestartMidPush(t *testing.T) {
	base := pgtest.BaseURL(t)
	if testing.Short() {
		t.Skip("sends 2,000 messages through a database restart")
	}
	const users, perPush, window = 2000, 500, 500
	emu, emuURL := fcmtest.StartEmulator(t, emulator.Options{Latency: 100 * time.Millisecond})
	e := &env{t: t, emu: emu, emuURL: emuURL, logs: newSyncBuffer(), dataDir: t.TempDir(), adminTok: "test-admin-token"}
	dbURL := pgtest.NewSchema(t, base, nil)
	u, err := url.Parse(pgtest.WithParams(t, dbURL, map[string]string{"pool_max_conns": "8"}))
	if err != nil {
		t.Fatal(err)
	}
	p := testenv.StartProxy(t, u.Host)
	u.Host = p.Addr()
	e.dbURL = u.String()
	e.startService()
	a := e.NewApp(nil)
	c := a.Client
	registerAll(t, c, users, 16)

	var pushIDs []string
	for start := 0; start < users; start += perPush {
		ids := make([]any, perPush)
		for i := range ids {
			ids[i] = fmt.Sprintf("u%d", start+i)
		}
		res, err := c.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: ids, Title: "restart", Content: "c"})
		if err != nil {
			t.Fatalf("push: %v", err)
		}
		pushIDs = append(pushIDs, res.PushID)
	}
	waitFor(t, "the first 300 messages", 60*time.Second, func() bool { return emu.Stats().Accepted >= 300 })
	p.Stop()
	at := emu.Stats().Accepted
	time.Sleep(400 * time.Millisecond) // the length of the restart, not a wait for work
	p.Restore()
	t.Logf("database away for 0.4 s after %d of %d messages", at, users)

	sent := func() map[string]int { return sentByPush(t, emu, pushIDs) }
	waitFor(t, "every token", 3*time.Minute, func() bool { return len(sent()) == users })
	// A resend is recorded when its answer is: the pushes' end says every
	// answer is (a resent token seen at the emulator may not be, yet).
	pgWaitFinished(t, dbURL, pushIDs)
	resent := pgResentTokens(t, dbURL, pushIDs)
	dups := 0
	for token, n := range sent() {
		if n > 1 {
			dups++
			if !resent[token] {
				t.Errorf("token %s got %d messages and is not recorded as resent", token, n)
			}
		}
	}
	if len(resent) >= window {
		t.Errorf("resent: got %d, want fewer than the node's window of %d", len(resent), window)
	}
	t.Logf("resent recorded: %d; sent twice: %d", len(resent), dups)
}
