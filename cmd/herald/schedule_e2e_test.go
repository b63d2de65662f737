package main

import (
	"context"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/internal/testenv"
)

// startClocked runs the service on clk. The emulator keeps the real clock:
// it checks the expiry of the JWTs that x/oauth2 signs on the real one.
// testClock is the clock tests set (testenv.Clock).
type testClock = testenv.Clock

func startClocked(t *testing.T, clk *testClock) *env {
	t.Helper()
	return startWith(t, emulator.Options{}, func(c *config) { c.overrides.Clock = clk.Now })
}

// startSlotted runs the service on clk, River's clock too, for a test of
// a real scheduled send (nextSlot, startSlot).
// slotted sets the clock of startSlotted.
func slotted(c *testClock) func(*config) {
	return func(cfg *config) { cfg.overrides.Clock = c.Now }
}

func startSlotted(t *testing.T, clk *testClock) *env {
	t.Helper()
	return startWith(t, emulator.Options{}, slotted(clk))
}

func schedule(a testApp, users []any, at string) (client.PushResult, error) {
	return a.Client.PushUsers(context.Background(), client.PushUsersRequest{
		UserIDs: users, Title: "Scheduled", Content: "at " + at, Options: &client.Options{ScheduleTime: at},
	})
}

// nextSlot is a send time 61 s ahead of the clock, the shortest wait a
// real scheduled send allows (the lead is 60 s). The clock stands still
// there while the test sets up and schedules (on a slow machine that takes
// more than the second of slack), until the test starts it (startSlot).
func nextSlot(clk *testClock) (time.Time, string) {
	at := time.Date(2026, 12, 1, 23, 0, 0, 0, testenv.Seoul)
	clk.Freeze(at.Add(-61 * time.Second))
	return at, "2026-12-01T23:00"
}

// slotRunUp is how long before the send time startSlot starts the clock:
// room for River to make the job due (its scheduler passes every 5 s, and
// the jump of the clock may cost River's leader a term of 5 s) and for
// the job to start and wait in-process for the exact time, as a real
// scheduled send's job does.
const slotRunUp = 15 * time.Second

// startSlot lets the clock of nextSlot run, skipping all but slotRunUp of
// the minute of lead: the node's clock, River's included, from slotRunUp
// before the send time, so that the job River holds until shortly before
// it is due as a real scheduled send's job is by then.
func startSlot(clk *testClock, at time.Time) {
	clk.Run(at.Add(-slotRunUp))
}

func TestScheduledRestartAcrossSendTime(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a scheduled send (about 15 s)")
	}
	t.Parallel()
	clk := &testClock{}
	sendAt, slot := nextSlot(clk)
	e := startSlotted(t, clk)
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1")
	res, err := schedule(a, []any{"u1"}, slot)
	if err != nil {
		t.Fatal(err)
	}
	startSlot(clk, sendAt)
	if err := e.svc.shutdown(); err != nil {
		t.Fatal(err)
	}
	clk.Run(sendAt.Add(2 * time.Second)) // the send time passes while the server is down
	restarted := clk.Now()
	e.startService(slotted(clk))
	waitFor(t, "the overdue push", 20*time.Second, func() bool { return len(e.emu.Messages("tok-u1")) == 1 })
	t.Logf("sent %v after the restart", clk.Fake(e.emu.Messages("tok-u1")[0].ReceivedAt).Sub(restarted))
	waitFor(t, "push done", 10*time.Second, func() bool { return e.Push(res.PushID).Status == "done" })
}
