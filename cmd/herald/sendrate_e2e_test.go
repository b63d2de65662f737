package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
)

// arrivals returns when the emulator accepted each message of each push,
// oldest first, by push id.
func (e *env) arrivals(pushIDs ...string) map[string][]time.Time {
	e.t.Helper()
	out := map[string][]time.Time{}
	for _, r := range e.emu.Messages("") {
		var m struct{ Data map[string]string }
		if err := json.Unmarshal(r.Message, &m); err != nil {
			e.t.Fatalf("emulator message %s: %v", r.Message, err)
		}
		if id := m.Data["pushId"]; slices.Contains(pushIDs, id) {
			out[id] = append(out[id], r.ReceivedAt)
		}
	}
	return out
}

// TestSendRate: an app set through the admin API to 600 sends a minute (10
// a second) sends two pushes of 20 users each, accepted together, at its
// rate all together. Counting, not timing Herald: the bucket lets 1 send
// go at once and each other one 0.1 s after the one before, so the 40
// arrivals at the emulator span at least 3.9 s; the test asks 2.9 s,
// leaving a second for a first send slower than the rest. Unpaced, both
// pushes arrive within milliseconds; paced per push job instead of per
// app, their 20 each would span under 2 s side by side.
func TestSendRate(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.newApp(map[string]any{"sendRatePerMinute": 600})
	var app struct{ SendRatePerMinute int }
	if e.admin("GET", "/admin/v1/apps/"+a.ID, nil, &app); app.SendRatePerMinute != 600 {
		t.Fatalf("app: got sendRatePerMinute %d, want 600", app.SendRatePerMinute)
	}
	const perPush = 20
	var users [2][]any
	for i := range 2 * perPush {
		u := fmt.Sprintf("u%02d", i)
		e.register(a, "rate-", u)
		users[i/perPush] = append(users[i/perPush], u)
	}
	ids := make([]string, 2)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			res, err := a.c.PushUsers(t.Context(), client.PushUsersRequest{UserIDs: users[i], Title: "paced", Content: "c"})
			if err != nil {
				t.Errorf("push %d: %v", i, err)
				return
			}
			ids[i] = res.PushID
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for _, id := range ids {
		if p := e.waitFinal(id, 30*time.Second); p.Status != "done" || p.Counts.Sent != perPush {
			t.Errorf("push %s: got %s with %d sent, want done with %d", id, p.Status, p.Counts.Sent, perPush)
		}
	}
	got := e.arrivals(ids...)
	var all []time.Time
	for _, id := range ids {
		all = append(all, got[id]...)
	}
	if len(all) != 2*perPush {
		t.Fatalf("arrivals: got %d, want %d", len(all), 2*perPush)
	}
	slices.SortFunc(all, func(x, y time.Time) int { return x.Compare(y) })
	span := all[len(all)-1].Sub(all[0])
	const rate, burst = 10, 1 // a second; the bucket holds a tenth of a second
	floor := time.Duration(float64(len(all)-burst)/rate*float64(time.Second)) - time.Second
	if span < floor {
		t.Errorf("the 40 sends arrived within %v, want at least %v at 10 a second", span, floor)
	}
	a0, a1 := got[ids[0]], got[ids[1]]
	t.Logf("40 sends over %v; push 1 from %v to %v, push 2 from %v to %v", span,
		a0[0].Sub(all[0]), a0[len(a0)-1].Sub(all[0]), a1[0].Sub(all[0]), a1[len(a1)-1].Sub(all[0]))
}

// TestSendRateInvalid: a send rate that is not a whole number from 1 to
// 10,000,000 is refused with the spec's error body naming the member, on
// create and on patch, and the app keeps its rate.
func TestSendRateInvalid(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.newAppWithoutFCM(nil)
	path := "/admin/v1/apps/" + a.ID
	e.patchApp(a, map[string]any{"sendRatePerMinute": 1200})
	for _, bad := range []string{`0`, `-1`, `2.5`, `10000001`, `"fast"`, `[600]`} {
		for _, req := range []struct{ method, path, body string }{
			{"PATCH", path, `{"sendRatePerMinute":` + bad + `}`},
			{"POST", "/admin/v1/apps", `{"name":"x","sendRatePerMinute":` + bad + `}`},
		} {
			var body struct {
				StatusCode int
				Path, Code string
				Message    string
				Details    []struct{ Field, Reason string }
			}
			code := e.admin(req.method, req.path, []byte(req.body), &body)
			if code != http.StatusBadRequest || body.StatusCode != 400 || body.Path != req.path || body.Code != "ERR-AB-VAL-00" ||
				len(body.Details) != 1 || body.Details[0].Field != "sendRatePerMinute" {
				t.Errorf("%s %s: got %d %+v, want 400 ERR-AB-VAL-00 naming sendRatePerMinute", req.method, req.body, code, body)
			}
		}
	}
	var app struct{ SendRatePerMinute int }
	if e.admin("GET", path, nil, &app); app.SendRatePerMinute != 1200 {
		t.Errorf("after refused changes: got %d, want 1200", app.SendRatePerMinute)
	}
	var list struct{ Apps []any }
	if e.admin("GET", "/admin/v1/apps", nil, &list); len(list.Apps) != 1 {
		t.Errorf("apps after refused creates: got %d, want 1", len(list.Apps))
	}
}
