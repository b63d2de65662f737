package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

// pushBodies are a body of each push endpoint, with the options given.
var pushBodies = map[string]func(opts map[string]any) map[string]any{
	"/api/push/v2/users": func(o map[string]any) map[string]any {
		return map[string]any{"userIds": []any{"u1"}, "title": "Sale", "content": "Today", "options": o}
	},
	"/api/push/v2/messages": func(o map[string]any) map[string]any {
		return map[string]any{"messages": []any{map[string]any{"userId": "u1", "title": "Sale", "content": "Today"}}, "options": o}
	},
	"/api/push/v2/topics": func(o map[string]any) map[string]any {
		return map[string]any{"topic": "news", "title": "Sale", "content": "Today", "options": o}
	},
	"/api/push/v2/all": func(o map[string]any) map[string]any {
		return map[string]any{"title": "Sale", "content": "Today", "options": o}
	},
	"/api/push/v2/segments": func(o map[string]any) map[string]any {
		return map[string]any{"filter": map[string]any{"field": "platform", "eq": "android"}, "title": "Sale", "content": "Today", "options": o}
	},
}

// TestSpreadMinutesRefused: options.spreadMinutes is a whole number from
// 1 to 1440 on every push endpoint but /messages; anything else, on
// /messages, with priority high and with nightPolicy defer, is 400 naming
// options.spreadMinutes alone, with nothing stored or charged. Null is
// absent.
func TestSpreadMinutesRefused(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(map[string]any{"tier": "business"})
	e.Register(a, "spr-", "u1")
	e.ServerDo("POST", "/api/topic/v2/subscribe", a.Keys(), map[string]any{"topic": "news", "userIds": []any{"u1"}})
	refused := []struct {
		name string
		opts map[string]any
	}{
		{"Zero", map[string]any{"spreadMinutes": 0}},
		{"Negative", map[string]any{"spreadMinutes": -5}},
		{"OverADay", map[string]any{"spreadMinutes": 1441}},
		{"Fraction", map[string]any{"spreadMinutes": 1.5}},
		{"WholeFraction", map[string]any{"spreadMinutes": json.RawMessage(`5.0`)}},
		{"Exponent", map[string]any{"spreadMinutes": json.RawMessage(`1e1`)}},
		{"String", map[string]any{"spreadMinutes": "5"}},
		{"Boolean", map[string]any{"spreadMinutes": true}},
		{"Object", map[string]any{"spreadMinutes": map[string]any{}}},
		{"High", map[string]any{"spreadMinutes": 5, "priority": "high"}},
		{"Defer", map[string]any{"spreadMinutes": 5, "nightPolicy": "defer"}},
	}
	for path, body := range pushBodies {
		for _, tt := range refused {
			t.Run(path+"/"+tt.name, func(t *testing.T) {
				res := e.ServerDo("POST", path, a.Keys(), body(tt.opts))
				got := testenv.WantError(t, res, path, herald.ErrInvalidRequest)
				if len(got.Details) != 1 || got.Details[0].Field != "options.spreadMinutes" {
					t.Errorf("got %s, want 400 naming options.spreadMinutes alone", res.Body)
				}
			})
		}
	}
	for path, body := range pushBodies {
		if path == "/api/push/v2/messages" {
			continue // no local time there either
		}
		t.Run(path+"/LocalTime", func(t *testing.T) {
			at := time.Now().In(testenv.Seoul).Add(2 * time.Hour).Format(herald.ScheduleLayout)
			res := e.ServerDo("POST", path, a.Keys(), body(map[string]any{"spreadMinutes": 5, "localTime": true, "scheduleTime": at}))
			got := testenv.WantError(t, res, path, herald.ErrInvalidRequest)
			if len(got.Details) != 1 || got.Details[0].Field != "options.spreadMinutes" || !strings.Contains(got.Details[0].Reason, "localTime") {
				t.Errorf("got %s, want 400 naming options.spreadMinutes alone, for options.localTime", res.Body)
			}
		})
	}
	t.Run("Messages", func(t *testing.T) {
		path := "/api/push/v2/messages"
		res := e.ServerDo("POST", path, a.Keys(), pushBodies[path](map[string]any{"spreadMinutes": 5}))
		got := testenv.WantError(t, res, path, herald.ErrInvalidRequest)
		if len(got.Details) != 1 || got.Details[0].Field != "options.spreadMinutes" {
			t.Errorf("got %s, want 400 naming options.spreadMinutes alone", res.Body)
		}
	})
	if got := e.PushList(a); len(got) != 0 || e.Usage(a) != 0 {
		t.Fatalf("refused pushes: %d stored, %v Server Actions charged; want none", len(got), e.Usage(a))
	}
	for path, body := range pushBodies {
		if path == "/api/push/v2/messages" {
			continue
		}
		for _, tt := range []struct {
			name string
			opts map[string]any
			want any
		}{
			{"One", map[string]any{"spreadMinutes": 1}, 1.0},
			{"ADay", map[string]any{"spreadMinutes": 1440}, 1440.0},
			{"Null", map[string]any{"spreadMinutes": nil}, nil},
		} {
			t.Run(path+"/"+tt.name, func(t *testing.T) {
				res := e.ServerDo("POST", path, a.Keys(), body(tt.opts))
				if res.Status != http.StatusOK {
					t.Fatalf("got %d %s, want 200", res.Status, res.Body)
				}
				if p := e.pushJSON(res.Header.Get("X-Push-Id")); p["spreadMinutes"] != tt.want {
					t.Errorf("push JSON spreadMinutes: got %#v, want %#v", p["spreadMinutes"], tt.want)
				}
			})
		}
	}
}

// spreadUsers registers n users u0…u(n-1), one device each, tokens
// prefix+user, and returns them.
func spreadUsers(e *env, a testenv.App, prefix string, n int) []any {
	users := make([]string, n)
	ids := make([]any, n)
	for i := range users {
		users[i] = fmt.Sprintf("u%02d", i)
		ids[i] = users[i]
	}
	e.Register(a, prefix, users...)
	return ids
}

// waitSpreadStep waits until exactly want tokens of push id reached the
// emulator, each once, and its chunk's job waits for its next user (no
// send job is due or running): on the frozen clock nothing more can be
// sent, so a send early would show here.
func waitSpreadStep(t *testing.T, e *env, id string, want int) {
	t.Helper()
	testenv.WaitFor(t, fmt.Sprintf("%d tokens sent", want), 30*time.Second, func() bool {
		return len(e.SentTo(id)) >= want && e.sendJobsBusy() == 0
	})
	sent := e.SentTo(id)
	if len(sent) != want {
		t.Fatalf("at %d tokens: got %d tokens sent, want %d", want, len(sent), want)
	}
	for token, n := range sent {
		if n != 1 {
			t.Fatalf("token %s sent %d times, want once", token, n)
		}
	}
}

// sendJobsBusy counts the send jobs due or running (a snoozed one is
// scheduled).
func (e *env) sendJobsBusy() int {
	var n int
	if err := e.QueryRow(`SELECT COUNT(*) FROM river_job WHERE kind = 'herald.send' AND state IN ('available', 'running', 'retryable')`).Scan(&n); err != nil {
		e.T.Fatalf("send jobs: %v", err)
	}
	return n
}

// TestSpreadEvenSteps: a push to 40 users over 10 minutes sends user k at
// start + k × 15 s: as the frozen clock steps on, exactly the users due by
// then have reached the emulator, each once, and the push ends done at
// the spread's end. A users push, and an all-users push (whose users are
// counted at its start).
func TestSpreadEvenSteps(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"/api/push/v2/users", "/api/push/v2/all"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			clk := &testenv.Clock{}
			start0 := time.Date(2026, 12, 2, 14, 0, 0, 0, testenv.Seoul)
			clk.Freeze(start0)
			e := start(t, testenv.Clocked(clk))
			a := e.NewApp(map[string]any{"tier": "business"})
			users := spreadUsers(e, a, "even-", 40)
			body := map[string]any{"title": "Sale", "content": "Today", "options": map[string]any{"spreadMinutes": 10}}
			if path == "/api/push/v2/users" {
				body["userIds"] = users
			}
			res := e.ServerDo("POST", path, a.Keys(), body)
			if res.Status != http.StatusOK {
				t.Fatalf("push: got %d %s", res.Status, res.Body)
			}
			id := res.Header.Get("X-Push-Id")
			waitSpreadStep(t, e, id, 1) // user 0, at the start
			p := e.pushJSON(id)
			if p["spreadMinutes"] != 10.0 || p["spreadUntil"] != start0.Add(10*time.Minute).UTC().Format(time.RFC3339) || p["status"] != "sending" {
				t.Fatalf("push JSON: spreadMinutes %v, spreadUntil %v, status %v; want 10, %s, sending", p["spreadMinutes"], p["spreadUntil"],
					p["status"], start0.Add(10*time.Minute).UTC().Format(time.RFC3339))
			}
			for _, at := range []time.Duration{time.Minute + 7*time.Second, 2*time.Minute + 7*time.Second, 5*time.Minute + 7*time.Second,
				9*time.Minute + 50*time.Second} {
				clk.Freeze(start0.Add(at))
				waitSpreadStep(t, e, id, int(at/(15*time.Second))+1)
			}
			clk.Freeze(start0.Add(10 * time.Minute))
			final := e.WaitFinal(id, 30*time.Second)
			if final.Status != "done" || final.Counts.Sent != 40 {
				t.Fatalf("at the end: got %s with %d sent, want done, 40 sent", final.Status, final.Counts.Sent)
			}
			waitSpreadStep(t, e, id, 40)
		})
	}
}

// TestSpreadNight: a marketing push spread from 20:55 over 10 minutes is
// judged against the night window as each part is sent: "late" (no
// night consent) due at 20:55 and "all" (night consent) due at 20:58:20
// are sent, "day" (no night consent) due at 21:01:40 is suppressed by the
// night, counted suppressedNight and charged as consent suppression is.
func TestSpreadNight(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	start0 := time.Date(2026, 12, 2, 20, 55, 0, 0, testenv.Seoul)
	clk.Freeze(start0.Add(-time.Hour))
	e := start(t, testenv.Clocked(clk))
	a := testenv.NightApp(t, e.Harness)
	clk.Freeze(start0)
	res := e.ServerDo("POST", "/api/push/v2/users", a.Keys(), map[string]any{"userIds": []any{"late", "all", "day"}, "title": "Night sale",
		"content": "50% off", "options": map[string]any{"isMarketing": true, "spreadMinutes": 10}})
	if res.Status != http.StatusOK {
		t.Fatalf("push: got %d %s", res.Status, res.Body)
	}
	id := res.Header.Get("X-Push-Id")
	waitSpreadStep(t, e, id, 1)
	clk.Freeze(start0.Add(4 * time.Minute)) // 20:59
	waitSpreadStep(t, e, id, 2)
	clk.Freeze(start0.Add(7 * time.Minute)) // 21:02
	final := e.WaitFinal(id, 30*time.Second)
	if final.Status != "done" || final.Counts.Sent != 2 || final.Counts.SuppressedNight != 1 || final.ServerActions != 1.5 {
		t.Fatalf("got %+v, want done, 2 sent, 1 suppressed by the night, 1.5 Server Actions", final)
	}
	waitSpreadStep(t, e, id, 2)
	for token := range e.SentTo(id) {
		if !strings.HasSuffix(token, "-late") && !strings.HasSuffix(token, "-all") {
			t.Errorf("sent to %s; want late and all only", token)
		}
	}
}

// TestSpreadCancel: a spread push is cancelled while it sends: 200 with
// status cancelled; its users not yet due are never sent, even once
// their time passes, and its charge stands (it began, as a held push's).
func TestSpreadCancel(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	start0 := time.Date(2026, 12, 2, 14, 0, 0, 0, testenv.Seoul)
	clk.Freeze(start0)
	e := start(t, testenv.Clocked(clk))
	a := e.NewApp(map[string]any{"tier": "business"})
	users := spreadUsers(e, a, "cancel-", 40)
	res := e.ServerDo("POST", "/api/push/v2/users", a.Keys(), map[string]any{"userIds": users, "title": "Sale", "content": "Today",
		"options": map[string]any{"spreadMinutes": 10}})
	if res.Status != http.StatusOK {
		t.Fatalf("push: got %d %s", res.Status, res.Body)
	}
	id := res.Header.Get("X-Push-Id")
	waitSpreadStep(t, e, id, 1)
	clk.Freeze(start0.Add(time.Minute + 7*time.Second))
	waitSpreadStep(t, e, id, 5)
	var p testenv.PushView
	if code := e.AdminJSON("POST", "/admin/v1/pushes/"+id+"/cancel", nil, &p); code != http.StatusOK || p.Status != "cancelled" || p.Counts.Sent != 5 {
		t.Fatalf("cancel: got %d %+v, want 200 cancelled with 5 sent", code, p)
	}
	clk.Freeze(start0.Add(11 * time.Minute)) // every user's time has passed
	testenv.WaitFor(t, "the push's send jobs to end", 30*time.Second, func() bool {
		var n int
		if err := e.QueryRow(`SELECT COUNT(*) FROM river_job WHERE kind = 'herald.send' AND state NOT IN ('completed', 'cancelled', 'discarded')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 0
	})
	waitSpreadStep(t, e, id, 5)
	if got := e.Push(id); got.Status != "cancelled" || got.Counts.Sent != 5 || got.ServerActions != 20 || e.Usage(a) != 20 {
		t.Fatalf("after the spread's end: got %+v, usage %v; want cancelled, 5 sent, 20 Server Actions charged", got, e.Usage(a))
	}
	if code := e.AdminJSON("POST", "/admin/v1/pushes/"+id+"/cancel", nil, nil); code != http.StatusConflict {
		t.Errorf("cancel again: got %d, want 409", code)
	}
}

// TestSpreadScheduled: a scheduled push spreads from its scheduled time:
// 4 users over 2 minutes from 15:00 are sent at 15:00, 15:00:30, 15:01
// and 15:01:30, none before.
func TestSpreadScheduled(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	at := time.Date(2026, 12, 2, 15, 0, 0, 0, testenv.Seoul)
	clk.Freeze(at.Add(-10 * time.Minute))
	e := start(t, testenv.Clocked(clk))
	a := e.NewApp(map[string]any{"tier": "business"})
	users := spreadUsers(e, a, "sched-", 4)
	res := e.ServerDo("POST", "/api/push/v2/users", a.Keys(), map[string]any{"userIds": users, "title": "Sale", "content": "Today",
		"options": map[string]any{"spreadMinutes": 2, "scheduleTime": "2026-12-02T15:00"}})
	if res.Status != http.StatusOK {
		t.Fatalf("push: got %d %s", res.Status, res.Body)
	}
	id := res.Header.Get("X-Push-Id")
	if p := e.pushJSON(id); p["status"] != "scheduled" || p["spreadMinutes"] != 2.0 || p["spreadUntil"] != nil {
		t.Fatalf("before its time: status %v, spreadMinutes %v, spreadUntil %v; want scheduled, 2, null", p["status"], p["spreadMinutes"], p["spreadUntil"])
	}
	clk.Freeze(at)
	waitSpreadStep(t, e, id, 1)
	if p := e.pushJSON(id); p["spreadUntil"] != at.Add(2*time.Minute).UTC().Format(time.RFC3339) {
		t.Fatalf("spreadUntil: got %v, want %s", p["spreadUntil"], at.Add(2*time.Minute).UTC().Format(time.RFC3339))
	}
	clk.Freeze(at.Add(time.Minute + 10*time.Second))
	waitSpreadStep(t, e, id, 3)
	clk.Freeze(at.Add(2 * time.Minute))
	if final := e.WaitFinal(id, 30*time.Second); final.Status != "done" || final.Counts.Sent != 4 {
		t.Fatalf("at the end: got %s, %d sent; want done, 4 sent", final.Status, final.Counts.Sent)
	}
	waitSpreadStep(t, e, id, 4)
}
