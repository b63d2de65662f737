package api_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"

	"github.com/heraldpush/herald/client"
)

// TestFCMProjectRate: two apps whose service accounts name one FCM project,
// each at the default 600,000 a minute, are paced together to the
// project's rate, here --fcm-project-rate 600 (10 a second): 20 users of
// each, pushed at once, arrive at the emulator over at least 3.9 s (the
// project bucket lets 1 go at once, each other 0.1 s after the one
// before); the test asks 2.9 s. Unpaced, or paced per app, the 40 arrive
// within milliseconds. An app of another project is not held back by
// them: paced alone at its own project's rate, its 20 are all in by the
// time about half of the shared project's 40 are (held back by them, they
// would come among the last of all 60).
func TestFCMProjectRate(t *testing.T) {
	t.Parallel()
	e := start(t, testenv.Options{FCMProjectRate: 600})
	const n, rate, burst = 20, 10, 1 // each app's users; a second; the bucket holds a tenth of a second
	shared, other := e.pushProjects(n)
	floor := time.Duration(float64(2*n-burst)/rate*float64(time.Second)) - time.Second
	sharedSpan := shared[2*n-1].Sub(shared[0])
	if sharedSpan < floor {
		t.Errorf("the %d sends of one project arrived within %v, want at least %v at 10 a second", 2*n, sharedSpan, floor)
	} else {
		t.Logf("%d sends of two apps of one project over %v", 2*n, sharedSpan)
	}
	before := 0 // the shared project's sends in before the other's last
	for _, at := range shared {
		if !at.After(other[n-1]) {
			before++
		}
	}
	if before >= 2*n*3/4 {
		t.Errorf("the other project's last send came after %d of the first project's %d, want it unpaced by them (before %d)", before, 2*n, 2*n*3/4)
	}
}

// pushProjects makes two apps of one FCM project and one of another, each
// at the default app rate with n users, pushes to all of each at once,
// waits for the three pushes and returns when the emulator took each
// message: the 2n of the shared project and the n of the other, in order.
func (e *env) pushProjects(n int) (shared, other []time.Time) {
	e.T.Helper()
	var apps [3]testenv.App
	for i, project := range []string{"shared-proj", "shared-proj", "other-proj"} {
		apps[i] = e.NewAppWithoutFCM(map[string]any{"name": fmt.Sprintf("app %d", i)})
		e.PutCredentials(apps[i], project)
	}
	users := make([]any, n)
	for j := range users {
		users[j] = fmt.Sprintf("u%02d", j)
	}
	for i, a := range apps {
		for _, u := range users {
			e.Register(a, fmt.Sprintf("proj%d-", i), u.(string))
		}
	}
	ids := make([]string, len(apps))
	var wg sync.WaitGroup
	for i, a := range apps {
		wg.Go(func() {
			res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: users, Title: "paced", Content: "c"})
			if err != nil {
				e.T.Errorf("push of app %d: %v", i, err)
				return
			}
			ids[i] = res.PushID
		})
	}
	wg.Wait()
	if e.T.Failed() {
		e.T.FailNow()
	}
	for i, id := range ids {
		if p := e.WaitFinal(id, 30*time.Second); p.Status != "done" || p.Counts.Sent != n {
			e.T.Fatalf("push of app %d: got %s with %d sent, want done with %d", i, p.Status, p.Counts.Sent, n)
		}
	}
	arrivals := e.arrivals(ids...)
	shared = append(arrivals[ids[0]], arrivals[ids[1]]...)
	other = arrivals[ids[2]]
	if len(shared) != 2*n || len(other) != n {
		e.T.Fatalf("arrivals: got %d of the shared project and %d of the other, want %d and %d", len(shared), len(other), 2*n, n)
	}
	for _, ts := range [][]time.Time{shared, other} {
		slices.SortFunc(ts, func(x, y time.Time) int { return x.Compare(y) })
	}
	return shared, other
}
