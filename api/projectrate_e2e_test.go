package api_test

import (
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/server"
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
	e := start(t, testenv.Options{Config: server.Config{FCM: server.FCM{ProjectRate: 600}}})
	const n, rate, burst = 20, 10, 1 // each app's users; a second; the bucket holds a tenth of a second
	shared, other := e.PushProjects(n)
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
