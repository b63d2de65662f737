package delivery

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

// pushTogether accepts, all at once, a push of apps[i] to users[i] for
// each i, runs their jobs together and checks that each ended done with
// every user sent; it returns their ids.
func (h *harness) pushTogether(apps []harnessApp, users [][]any) []string {
	h.t.Helper()
	ids := make([]string, len(apps))
	for i, a := range apps {
		id, err := h.accept(a, herald.KindUsers, map[string]any{"userIds": users[i], "title": "paced", "content": "c"})
		must(h.t, err)
		ids[i] = id
	}
	h.run()
	for i, id := range ids {
		if p := h.final(id); p.Status != herald.StatusDone || p.Counts.Sent != len(users[i]) {
			h.t.Fatalf("push %d: got %s with %+v, want done with %d sent", i, p.Status, p.Counts, len(users[i]))
		}
	}
	return ids
}

// arrivals returns when the emulator took each message of each push,
// oldest first, by push id.
func (h *harness) arrivals(ids ...string) map[string][]time.Time {
	h.t.Helper()
	out := map[string][]time.Time{}
	for _, m := range h.messages("") {
		if id := m.Data["pushId"]; slices.Contains(ids, id) {
			out[id] = append(out[id], m.ReceivedAt)
		}
	}
	for _, ts := range out {
		slices.SortFunc(ts, func(x, y time.Time) int { return x.Compare(y) })
	}
	return out
}

// TestSendRate: an app at 600 sends a minute (10 a second) sends two
// pushes of 20 users each, accepted together and run together, at its rate
// all together. Counting, not timing delivery: the bucket lets 1 send go
// at once and each other one 0.1 s after the one before, so the 40
// arrivals at the emulator span at least 3.9 s; the test asks 2.9 s,
// leaving a second for a first send slower than the rest. Unpaced, both
// pushes arrive within milliseconds; paced per push job instead of per
// app, their 20 each would span under 2 s side by side.
func TestSendRate(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	a := h.newApp(func(a *herald.App) { a.SendRatePerMinute = 600 })
	if got := h.app(a.ID).SendRatePerMinute; got != 600 {
		t.Fatalf("app: got sendRatePerMinute %d, want 600", got)
	}
	const n, rate, burst = 40, 10, 1 // a second; the bucket holds a tenth of a second
	floor := time.Duration(float64(n-burst)/rate*float64(time.Second)) - time.Second
	var users [2][]any
	for i := range n {
		u := fmt.Sprintf("u%02d", i)
		h.register(a, "rate-", u)
		users[i*2/n] = append(users[i*2/n], u)
	}
	ids := h.pushTogether([]harnessApp{a, a}, users[:])
	var all []time.Time
	for _, at := range h.arrivals(ids...) {
		all = append(all, at...)
	}
	if len(all) != n {
		t.Fatalf("arrivals: got %d, want %d", len(all), n)
	}
	slices.SortFunc(all, func(x, y time.Time) int { return x.Compare(y) })
	if span := all[n-1].Sub(all[0]); span < floor {
		t.Errorf("the %d sends arrived within %v, want at least %v at 10 a second", n, span, floor)
	} else {
		t.Logf("%d sends over %v", n, span)
	}
}

// TestFCMProjectRate: two apps whose service accounts name one FCM
// project, each at the default 600,000 a minute, are paced together to the
// project's rate, here 600 a minute (10 a second): 20 users of each,
// pushed at once, arrive at the emulator over at least 3.9 s (the project
// bucket lets 1 go at once, each other 0.1 s after the one before); the
// test asks 2.9 s. Unpaced, or paced per app, the 40 arrive within
// milliseconds. An app of another project is not held back by them: paced
// alone at its own project's rate, its 20 are all in by the time about
// half of the shared project's 40 are (held back by them, they would come
// among the last of all 60).
func TestFCMProjectRate(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{projectRate: 600})
	const n, rate, burst = 20, 10, 1 // each app's users; a second; the bucket holds a tenth of a second
	var apps [3]harnessApp
	for i, project := range []string{"shared-proj", "shared-proj", "other-proj"} {
		apps[i] = h.newApp(nil)
		h.credentials(apps[i].ID, project)
	}
	users := make([]any, n)
	for j := range users {
		users[j] = fmt.Sprintf("u%02d", j)
	}
	for i, a := range apps {
		for _, u := range users {
			h.register(a, fmt.Sprintf("proj%d-", i), u.(string))
		}
	}
	ids := h.pushTogether(apps[:], [][]any{users, users, users})
	arrivals := h.arrivals(ids...)
	shared, other := append(arrivals[ids[0]], arrivals[ids[1]]...), arrivals[ids[2]]
	if len(shared) != 2*n || len(other) != n {
		t.Fatalf("arrivals: got %d of the shared project and %d of the other, want %d and %d", len(shared), len(other), 2*n, n)
	}
	slices.SortFunc(shared, func(x, y time.Time) int { return x.Compare(y) })
	floor := time.Duration(float64(2*n-burst)/rate*float64(time.Second)) - time.Second
	if sharedSpan := shared[2*n-1].Sub(shared[0]); sharedSpan < floor {
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
