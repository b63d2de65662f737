package server_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/internal/testenv"
)

// TestRiverKeepsRunningJobsUnderGivenClock: River's rescuer judges a
// running job stuck by the wall clock (time.Now, RescueStuckJobsAfter
// before it) against the attempt time River wrote from the node's clock.
// Under a clock an hour behind the wall clock every running job looked
// stuck at each of the rescuer's passes (every 30 s on the leader): it was
// made retryable under its worker, which River's completer then found
// changed under it (the "completion subscriber received a job that
// wasn't finalized" panic when the two met). A send held at the emulator
// over a whole pass must come back to a job no one took from it.
func TestRiverKeepsRunningJobsUnderGivenClock(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	clk.Run(time.Now().Add(-time.Hour))
	held := make(chan struct{})
	var once sync.Once
	release := make(chan struct{})
	o := testenv.Clocked(clk)
	o.Emulator = emulator.Options{BeforeAnswer: func(string) {
		once.Do(func() { close(held); <-release })
	}}
	o.Overrides.FCMTimeout = time.Minute // the held send must not time out before River's pass
	e := start(t, o)
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1")
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "t", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Fatal("the send never reached the emulator")
	}
	time.Sleep(35 * time.Second) // over one of River's rescuer passes (maintenance.JobRescuerIntervalDefault, 30 s): real time, as River's is
	close(release)
	e.WaitFinal(res.PushID, 20*time.Second)
	var rescued int
	if err := e.QueryRow(`SELECT count(*) FROM river_job WHERE CAST(errors AS TEXT) LIKE '%JobRescuer%'`).Scan(&rescued); err != nil {
		t.Fatal(err)
	}
	if rescued != 0 {
		t.Errorf("River's rescuer took %d running jobs from their worker under a clock an hour behind the wall clock, want none", rescued)
	}
	if n := len(e.Received("tok-u1")); n != 1 {
		t.Errorf("the device got the push %d times, want once; log:\n%s", n, e.Log)
	}
}
