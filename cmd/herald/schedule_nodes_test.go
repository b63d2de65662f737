package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/fcm/fcmtest"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/postgres/pgtest"
)

// TestScheduledNodeKilledBeforeTime: a node fetches the River jobs of ten
// scheduled pushes a few seconds before their minute (they are made due
// early and wait in the process) and is SIGKILLed 3 s before it; the two
// other nodes fire every push once, seconds after its time instead of
// after River's rescue (about two minutes). The bound of 10 s tells the
// two apart on a loaded machine (CI saw 1.2 s); it does not time Herald.
func TestScheduledNodeKilledBeforeTime(t *testing.T) {
	base := pgtest.BaseURL(t)
	if testing.Short() {
		t.Skip("builds the binary, runs three nodes and waits for a scheduled minute")
	}
	const adminToken = "ha_scheduleNodesAdminToken0123456789abcdef"
	dbURL := pgtest.NewSchema(t, base, nil)
	bin := buildHerald(t)
	emu, emuURL := fcmtest.StartEmulator(t, emulator.Options{})
	start := func() *process {
		return startProcess(t, bin, t.TempDir(), adminToken, emuURL, "HERALD_DATABASE_URL="+dbURL, "HERALD_MASTER_KEY="+testMasterKey)
	}
	holder := start()
	app := holder.newApp(adminToken, "schedule-nodes", emuURL)
	c := client.New(holder.publicURL, app.APIKey, app.SecretKey, nil)
	registerAll(t, c, 10, 4)

	fireAt := scheduleMinute()
	scheduled := map[string]bool{}
	for i := range 10 {
		res, err := c.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{fmt.Sprintf("u%d", i)},
			Title: "scheduled", Content: "c", Options: &client.Options{ScheduleTime: fireAt.In(testenv.Seoul).Format("2006-01-02T15:04")}})
		if err != nil {
			t.Fatalf("scheduled push %d: %v", i, err)
		}
		scheduled[res.PushID] = true
	}

	// The only node fetches the ten jobs early and holds them until the
	// minute; then the two others start, and the holder dies 3 s before.
	conn := pgConnect(t, dbURL)
	waitFor(t, "the holder to fetch the ten jobs", time.Until(fireAt), func() bool {
		var n int
		err := conn.QueryRow(context.Background(),
			`SELECT count(*) FROM river_job WHERE kind = 'herald.fanout' AND state = 'running'`).Scan(&n)
		return err == nil && n == len(scheduled)
	})
	others := []*process{start(), start()}
	if wait := time.Until(fireAt.Add(-3 * time.Second)); wait > 0 {
		time.Sleep(wait) // the kill is timed against the scheduled minute, not waiting for work
	}
	holder.kill()
	t.Logf("holder killed %v before the minute; %d nodes left", time.Until(fireAt).Round(time.Millisecond), len(others))

	waitFor(t, "the scheduled pushes", time.Until(fireAt)+30*time.Second, func() bool {
		return len(sentByPushIDs(t, emu, scheduled)) == len(scheduled)
	})
	for id, at := range sentByPushIDs(t, emu, scheduled) {
		if len(at) != 1 {
			t.Errorf("push %s: got %d messages, want 1", id, len(at))
			continue
		}
		late := at[0].Sub(fireAt)
		if late < 0 || late > 10*time.Second {
			t.Errorf("push %s: sent %v after its time, want within 10 s (River's rescue takes minutes)", id, late)
		}
		t.Logf("push %s sent %v after its time", id, late.Round(time.Millisecond))
	}
}

// TestConnectionsTerminatedThenPush (PostgreSQL): after the database ended
// every session of the node (pg_terminate_backend, as a failover does),
// the next push is answered 200 at once and delivered, instead of a 500
// for the dead pooled connection it met first.
func TestConnectionsTerminatedThenPush(t *testing.T) {
	if testEngine() != "postgres" {
		t.Skip("PostgreSQL only: ends the database sessions of the node")
	}
	name := fmt.Sprintf("herald-e2e-terminated-%d", time.Now().UnixNano())
	e := start(t, func(c *config) {
		c.DatabaseURL = pgtest.WithParams(t, c.DatabaseURL, map[string]string{"application_name": name})
	})
	a := e.NewApp(nil)
	e.Register(a, "term-", "u1", "u2")
	conn := pgConnect(t, os.Getenv(pgtest.EnvURL))
	var ended int
	if err := conn.QueryRow(context.Background(),
		`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, name).Scan(&ended); err != nil || ended == 0 {
		t.Fatalf("terminate: got %d sessions ended, %v; want some", ended, err)
	}
	res := e.ServerDo("POST", "/api/push/v2/users", a.Keys(), map[string]any{"userIds": []string{"u1", "u2"}, "title": "after", "content": "c"})
	if res.Status != http.StatusOK {
		t.Fatalf("push after %d sessions ended: got %d %s, want 200", ended, res.Status, res.Body)
	}
	p := e.WaitFinal(res.Header.Get("X-Push-Id"), 20*time.Second)
	if p.Status != "done" || p.Counts.Sent != 2 {
		t.Fatalf("push: got %s with %d sent, want done with 2", p.Status, p.Counts.Sent)
	}
}
