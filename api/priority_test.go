package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/fcm"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/server"
)

// TestPushPriority: options.priority is "normal" (the default) or
// "high" on every push endpoint; anything else, and "high" on a marketing
// push, is refused naming options.priority with nothing stored or
// charged. The push JSON shows it, and FCM is sent android.priority HIGH
// and apns-priority 10 for a high push, neither for a normal one.
func TestPushPriority(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(map[string]any{"tier": "business", "adSender": map[string]any{"name": "Shop", "contact": "080-000-0000"},
		"adOptOut": "수신거부: 마이 > 설정 > 알림"})
	e.Register(a, "prio-", "u1")
	e.Register(a, "prio-", "u2")
	e.ServerDo("POST", "/api/topic/v2/subscribe", a.Keys(), map[string]any{"topic": "codes", "userIds": []any{"u1"}})

	bodies := map[string]func(opts map[string]any) map[string]any{
		"/api/push/v2/users": func(o map[string]any) map[string]any {
			return map[string]any{"userIds": []any{"u1"}, "title": "Your code", "content": "123456", "options": o}
		},
		"/api/push/v2/messages": func(o map[string]any) map[string]any {
			return map[string]any{"messages": []any{map[string]any{"userId": "u1", "title": "Your code", "content": "123456"}}, "options": o}
		},
		"/api/push/v2/topics": func(o map[string]any) map[string]any {
			return map[string]any{"topic": "codes", "title": "Your code", "content": "123456", "options": o}
		},
		"/api/push/v2/all": func(o map[string]any) map[string]any {
			return map[string]any{"title": "Your code", "content": "123456", "options": o}
		},
		"/api/push/v2/segments": func(o map[string]any) map[string]any {
			return map[string]any{"filter": map[string]any{"field": "platform", "eq": "android"}, "title": "Your code", "content": "123456", "options": o}
		},
	}
	refused := []struct {
		name string
		opts map[string]any
	}{
		{"Unknown", map[string]any{"priority": "urgent"}},
		{"Capitalized", map[string]any{"priority": "HIGH"}},
		{"Empty", map[string]any{"priority": ""}},
		{"Number", map[string]any{"priority": 1}},
		{"Marketing", map[string]any{"priority": "high", "isMarketing": true}},
	}
	for path, body := range bodies {
		for _, tt := range refused {
			t.Run(path+"/"+tt.name, func(t *testing.T) {
				b := body(tt.opts)
				if tt.name == "Marketing" { // the (광고) prefix, so that only the priority is wrong
					setTitle(b, "(광고) Your code")
				}
				res := e.ServerDo("POST", path, a.Keys(), b)
				got := testenv.WantError(t, res, path, herald.ErrInvalidRequest)
				if len(got.Details) != 1 || got.Details[0].Field != "options.priority" {
					t.Errorf("got %s, want 400 naming options.priority alone", res.Body)
				}
			})
		}
	}
	t.Run("AdTitle", func(t *testing.T) { // marketing by its title alone
		b := bodies["/api/push/v2/users"](map[string]any{"priority": "high"})
		b["title"] = "(광고) Your code"
		got := testenv.WantError(t, e.ServerDo("POST", "/api/push/v2/users", a.Keys(), b), "/api/push/v2/users", herald.ErrInvalidRequest)
		if len(got.Details) != 1 || got.Details[0].Field != "options.priority" {
			t.Errorf("got %+v, want 400 naming options.priority", got)
		}
	})
	if got := e.PushList(a); len(got) != 0 || e.Usage(a) != 0 {
		t.Fatalf("refused pushes: %d stored, %v Server Actions charged; want none", len(got), e.Usage(a))
	}

	for path, body := range bodies {
		for _, tt := range []struct {
			name string
			opts map[string]any
			want herald.Priority
		}{
			{"High", map[string]any{"priority": "high"}, herald.PriorityHigh},
			{"Normal", map[string]any{"priority": "normal"}, herald.PriorityNormal},
			{"Absent", nil, herald.PriorityNormal},
			{"Null", map[string]any{"priority": nil}, herald.PriorityNormal},
		} {
			t.Run(path+"/"+tt.name, func(t *testing.T) {
				res := e.ServerDo("POST", path, a.Keys(), body(tt.opts))
				if res.Status != http.StatusOK {
					t.Fatalf("got %d %s, want 200", res.Status, res.Body)
				}
				id := res.Header.Get("X-Push-Id")
				if p := e.pushJSON(id); p["priority"] != string(tt.want) {
					t.Errorf("push JSON priority: got %#v, want %q", p["priority"], tt.want)
				}
				if final := e.WaitFinal(id, 10*time.Second); final.Status != "done" {
					t.Fatalf("push %s: got %s, want done", id, final.Status)
				}
				wantMessage(t, e, "prio-u1", id, tt.want == herald.PriorityHigh)
			})
		}
	}
}

// setTitle sets the title of a push body, or of its one message.
func setTitle(b map[string]any, title string) {
	if ms, ok := b["messages"].([]any); ok {
		ms[0].(map[string]any)["title"] = title
		return
	}
	b["title"] = title
}

// wantMessage checks the message of push id the emulator took for token:
// android.priority HIGH and apns-priority 10 when high, neither otherwise.
func wantMessage(t *testing.T, e *env, token, id string, high bool) {
	t.Helper()
	for _, m := range e.Received(token) {
		var msg struct {
			Data    map[string]string
			Android struct{ Priority *string }
			APNS    struct{ Headers map[string]string }
		}
		if err := json.Unmarshal(m.Message, &msg); err != nil {
			t.Fatal(err)
		}
		if msg.Data["pushId"] != id {
			continue
		}
		android, apns := "", msg.APNS.Headers["apns-priority"]
		if msg.Android.Priority != nil {
			android = *msg.Android.Priority
		}
		switch {
		case high && (android != "HIGH" || apns != "10"):
			t.Errorf("high push's message: android.priority %q, apns-priority %q; want HIGH and 10 (%s)", android, apns, m.Message)
		case !high && (msg.Android.Priority != nil || apns != ""):
			t.Errorf("normal push's message: android.priority %q, apns-priority %q; want neither (%s)", android, apns, m.Message)
		}
		return
	}
	t.Errorf("no message of push %s reached %s", id, token)
}

// TestHighPriorityLane: while fifteen normal pushes of one app hold every
// send worker and the FCM project's rate (300 a minute, 5 a second), each
// worker's next send reserved ahead, a one-user high push of another app
// of the project is sent before them: of the normal sends, the ones that
// reach FCM between the high push's accept and its arrival are fewer
// than half of the fourteen reserved ahead (behind them, it would come
// after all fourteen, 2.8 s later). Every normal push still ends done.
func TestHighPriorityLane(t *testing.T) {
	t.Parallel()
	e := start(t, testenv.Options{Config: server.Config{FCM: server.FCM{ProjectRate: 300, Client: fcm.ClientOptions{AllowAnyTokenURI: true}}}})
	blast, codes := e.NewAppWithoutFCM(map[string]any{"name": "blast"}), e.NewAppWithoutFCM(map[string]any{"name": "codes"})
	e.PutCredentials(blast, "otp-proj")
	e.PutCredentials(codes, "otp-proj")
	e.Register(codes, "code-", "u1")
	const pushes, each = 15, 2
	var normal []string
	for i := range pushes {
		users := make([]any, each)
		for j := range users {
			users[j] = fmt.Sprintf("u%02d-%d", i, j)
			e.Register(blast, "blast-", users[j].(string))
		}
		res := e.ServerDo("POST", "/api/push/v2/users", blast.Keys(), map[string]any{"userIds": users, "title": "Sale", "content": "c"})
		if res.Status != http.StatusOK {
			t.Fatalf("normal push %d: got %d %s", i, res.Status, res.Body)
		}
		normal = append(normal, res.Header.Get("X-Push-Id"))
	}
	testenv.WaitFor(t, "the normal pushes' first sends", 10*time.Second, func() bool { return len(e.Arrivals(normal...)) > 0 })
	accepted := time.Now()
	res := e.ServerDo("POST", "/api/push/v2/users", codes.Keys(), map[string]any{"userIds": []any{"u1"}, "title": "Your code", "content": "123456",
		"options": map[string]any{"priority": "high"}})
	if res.Status != http.StatusOK {
		t.Fatalf("high push: got %d %s", res.Status, res.Body)
	}
	high := res.Header.Get("X-Push-Id")
	for _, id := range append(normal, high) {
		if p := e.WaitFinal(id, 30*time.Second); p.Status != "done" {
			t.Fatalf("push %s: got %s, want done", id, p.Status)
		}
	}
	arrived := e.Arrivals(high)[high]
	if len(arrived) != 1 {
		t.Fatalf("high push: %d messages at the emulator, want 1", len(arrived))
	}
	between, total := 0, 0
	for _, ts := range e.Arrivals(normal...) {
		for _, at := range ts {
			total++
			if at.After(accepted) && at.Before(arrived[0]) {
				between++
			}
		}
	}
	if total != pushes*each {
		t.Fatalf("normal sends: got %d, want %d", total, pushes*each)
	}
	if between >= 7 {
		t.Errorf("%d normal sends reached FCM between the high push's accept and its arrival, want fewer than 7 (half of the 14 reserved ahead)", between)
	}
	t.Logf("%d normal sends between the high push's accept and its arrival (%v)", between, arrived[0].Sub(accepted))
}
