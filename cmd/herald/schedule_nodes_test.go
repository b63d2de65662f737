package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/fcm/fcmtest"
	"github.com/heraldpush/herald/postgres/pgtest"
)

// TestScheduledNodeKilledBeforeTime: a node fetches the River jobs of ten
// scheduled pushes a few seconds before their minute (they are made due
// early and wait in the process) and is SIGKILLed 3 s before it; the two
// other nodes fire every push within 1 s of its time, once, instead of
// after River's rescue (about two minutes).
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

	fireAt := time.Now().Add(61 * time.Second).Truncate(time.Minute).Add(time.Minute)
	if fireAt.Sub(time.Now()) > 119*time.Second {
		fireAt = fireAt.Add(-time.Minute)
	}
	scheduled := map[string]bool{}
	for i := range 10 {
		res, err := c.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{fmt.Sprintf("u%d", i)},
			Title: "scheduled", Content: "c", Options: &client.Options{ScheduleTime: fireAt.In(seoul).Format("2006-01-02T15:04")}})
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
		if late < 0 || late > time.Second {
			t.Errorf("push %s: sent %v after its time, want within 1s", id, late)
		}
		t.Logf("push %s sent %v after its time", id, late.Round(time.Millisecond))
	}
}
