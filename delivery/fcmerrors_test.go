package delivery

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/fcm/emulator"
)

// unreachable is a push's unreachable users, by user.
func (v pushView) unreachable() map[string]string {
	out := map[string]string{}
	for _, u := range v.Unreachable {
		out[u.UserID] = u.Reason
	}
	return out
}

// TestPushFCMErrors sends one push to users whose tokens draw each of FCM's
// answers from the emulator and checks what delivery makes of each.
func TestPushFCMErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	a := h.newApp(nil)
	for user, token := range map[string]string{
		"unreg": "unregistered-1", "inval": "invalid-1", "mism": "mismatch-1",
		"quota": "quota-1", "unavail": "unavailable-1", "fine": "fine-1",
	} {
		h.device(a, "dev-"+user, token, "android", user)
	}
	// "both" has one working and one dead device: it is reached.
	h.device(a, "dev-both-ok", "both-ok", "ios", "both")
	h.device(a, "dev-both-dead", "unregistered-both", "android", "both")
	// "bare" registered a device, then removed its token: no token left.
	h.device(a, "dev-bare", "bare-1", "android", "bare")
	must(t, h.store.DeleteToken(h.ctx, a.ID, "bare-1"))

	id := h.push(a, map[string]any{"userIds": []any{"unreg", "inval", "mism", "quota", "unavail", "fine", "both", "bare", "ghost"},
		"title": "t", "content": "c", "options": map[string]any{"requestGroupId": "fcm-errors"}})
	h.advance(time.Minute) // the retries' backoff
	p := h.final(id)

	t.Run("Done", func(t *testing.T) {
		if p.Status != herald.StatusDone || p.FailureReason != "" {
			t.Errorf("status: got %s %q, want done", p.Status, p.FailureReason)
		}
		c := p.Counts
		if c.RequestedUsers != 9 || c.Tokens != 8 || c.Sent != 4 || c.Failed != 4 || c.Unreachable != 5 {
			t.Errorf("counts: got %+v, want requested 9 tokens 8 sent 4 failed 4 unreachable 5", c)
		}
	})
	t.Run("Unreachable", func(t *testing.T) {
		want := map[string]string{
			"unreg": "APP_DELETED", "inval": "TOKEN_EXPIRED", "mism": "TOKEN_EXPIRED",
			"bare": "NO_TOKEN", "ghost": "NO_TOKEN",
		}
		if got := p.unreachable(); fmt.Sprint(got) != fmt.Sprint(want) || len(p.Unreachable) != len(want) {
			t.Errorf("unreachable users: got %v, want %v", p.Unreachable, want)
		}
	})
	t.Run("DeadTokensDeleted", func(t *testing.T) {
		for _, user := range []string{"unreg", "inval", "mism"} {
			if ds := h.devices(a, user); len(ds) != 0 {
				t.Errorf("devices of %s: got %+v, want none", user, ds)
			}
		}
		if ds := h.devices(a, "both"); len(ds) != 1 || ds[0].ID != "dev-both-ok" {
			t.Errorf("devices of both: got %+v, want only dev-both-ok", ds)
		}
		for _, user := range []string{"quota", "unavail", "fine"} {
			if ds := h.devices(a, user); len(ds) != 1 {
				t.Errorf("devices of %s: got %d, want 1", user, len(ds))
			}
		}
	})
	t.Run("RetriedAndDeliveredOnce", func(t *testing.T) {
		got := h.sentTo(id)
		want := map[string]int{"quota-1": 1, "unavailable-1": 1, "fine-1": 1, "both-ok": 1}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("messages by token: got %v, want %v", got, want)
		}
		// Each retried token was sent twice: refused, then accepted.
		if s := h.emu.Stats(); s.Received != 10 || s.Accepted != 4 {
			t.Errorf("emulator: got %+v, want received 10 accepted 4", s)
		}
	})
	t.Run("Failures", func(t *testing.T) {
		var users []string
		for _, f := range p.Failures {
			users = append(users, f.UserID)
			if f.Error == "" || len(f.Token) > 8 {
				t.Errorf("failure %+v: want an error and a shortened token", f)
			}
		}
		sort.Strings(users)
		if want := "[both inval mism unreg]"; fmt.Sprint(users) != want {
			t.Errorf("failed users: got %v, want %s", users, want)
		}
	})
	t.Run("NoSecondSendToDeletedTokens", func(t *testing.T) {
		q := h.final(h.pushUsers(a, "unreg", "both"))
		if q.Counts.Tokens != 1 || q.Counts.Sent != 1 || len(q.Unreachable) != 1 || q.Unreachable[0].Reason != "NO_TOKEN" {
			t.Errorf("push: got counts %+v unreachable %v, want 1 token sent and unreg NO_TOKEN", q.Counts, q.Unreachable)
		}
	})
}

// TestPushFCMTimeoutRetried: a send that FCM does not answer within the
// request timeout is given up, its stream reset, and retried as a network
// error is (DESIGN: a timeout is retried); the user gets the message once.
func TestPushFCMTimeoutRetried(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var held atomic.Bool
	h := newHarness(t, harnessOptions{fcmTimeout: 300 * time.Millisecond, emulator: emulator.Options{
		BeforeAnswer: func(token string) {
			if token == "slow-1" && held.CompareAndSwap(false, true) {
				<-release // the first send stays unanswered past the timeout
			}
		},
	}})
	t.Cleanup(func() { close(release) }) // before the emulator stops
	a := h.newApp(nil)
	h.device(a, "dev-slow", "slow-1", "android", "slow")
	id := h.pushUsers(a, "slow")
	h.advance(time.Minute) // the retry's backoff
	p := h.final(id)
	if c := p.Counts; p.Status != herald.StatusDone || c.Sent != 1 || c.Failed != 0 || c.Unreachable != 0 {
		t.Errorf("push: got %s with %+v, want done, sent 1", p.Status, c)
	}
	if !held.Load() {
		t.Fatal("the first send was never held")
	}
	if got := h.sentTo(id); fmt.Sprint(got) != "map[slow-1:1]" {
		t.Errorf("messages by token: got %v, want the retry's alone", got)
	}
}

// TestDeviceHandedOverDuringRetry: a send answered 503 is retried after
// its backoff; a device handed to another user, or logged out, meanwhile
// is not sent the retry.
func TestDeviceHandedOverDuringRetry(t *testing.T) {
	t.Parallel()
	g := newGate("unavailable-alice", "unavailable-carol")
	h := newHarness(t, harnessOptions{emulator: emulator.Options{BeforeAnswer: g.beforeAnswer}})
	a := h.newApp(nil)
	h.device(a, "dev-alice", "unavailable-alice", "android", "alice")
	h.device(a, "dev-carol", "unavailable-carol", "android", "carol")
	h.device(a, "dev-dave", "unavailable-dave", "android", "dave")
	id, err := h.accept(a, herald.KindUsers, map[string]any{"userIds": []any{"alice", "carol", "dave"}, "title": "for alice, carol and dave", "content": "c"})
	must(t, err)
	wait := h.background()
	g.await(t, "unavailable-alice")
	g.await(t, "unavailable-carol")
	bob := "bob"
	h.setUser(a, "dev-alice", &bob)
	h.setUser(a, "dev-carol", nil)
	g.open("unavailable-alice") // answered 503: retried later
	g.open("unavailable-carol")
	wait()
	h.advance(time.Minute) // the retries' backoff
	p := h.final(id)

	if got := h.sentTo(id); fmt.Sprint(got) != "map[unavailable-dave:1]" {
		t.Errorf("messages by token: got %v, want only dave's retry", got)
	}
	if s := h.emu.Stats(); s.Received != 4 || s.Accepted != 1 {
		t.Errorf("emulator: got %+v, want 4 requests (three 503s, dave's retry) and 1 accepted", s)
	}
	want := map[string]string{"alice": "NO_TOKEN", "carol": "NO_TOKEN"}
	if got := p.unreachable(); p.Status != herald.StatusDone || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("push: got %s, unreachable %v, want done, %v", p.Status, got, want)
	}
}

// TestTokenEndpointDownThenUp: while the token endpoint answers 503 the
// push waits and retries; once it answers again the push is delivered.
func TestTokenEndpointDownThenUp(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	a := h.newApp(nil)
	h.register(a, "tok-", "f0", "f1", "f2")
	h.emu.SetTokenEndpointStatus(http.StatusServiceUnavailable)
	id := h.pushUsers(a, "f0", "f1", "f2")
	h.advance(time.Minute) // a retry on the token endpoint
	if n := strings.Count(h.logs(), "FCM access token unavailable"); n < 2 {
		t.Fatalf("while the token endpoint is down: logged %d waits for the access token, want at least 2:\n%s", n, h.logs())
	}
	if p := h.view(id); p.Status != herald.StatusSending || h.emu.Stats().Received != 0 {
		t.Fatalf("while the token endpoint is down: got %s and %d sends, want sending and none", p.Status, h.emu.Stats().Received)
	}
	h.emu.SetTokenEndpointStatus(0)
	h.advance(time.Minute)
	p := h.final(id)
	if p.Status != herald.StatusDone || p.Counts.Sent != 3 {
		t.Errorf("push: got %s %q, %+v; want done with 3 sent", p.Status, p.FailureReason, p.Counts)
	}
}

// TestRetriesEndAfterAnHour: a token FCM keeps answering 503 is retried
// until an hour after the push started, then recorded failed, and the push
// ends.
func TestRetriesEndAfterAnHour(t *testing.T) {
	t.Parallel()
	began := time.Now()
	h := newHarness(t, harnessOptions{now: began})
	a := h.newApp(nil)
	h.register(a, "tok-", "ok")
	h.register(a, "down-", "cut-off")
	id := h.pushUsers(a, "ok", "cut-off")
	if h.emu.Stats().Rejected < 1 {
		t.Fatalf("emulator: got %+v, want the first failed attempt", h.emu.Stats())
	}
	if p := h.view(id); p.Status != herald.StatusSending {
		t.Fatalf("after one failure: got %s, want still sending", p.Status)
	}
	for range 61 {
		h.advance(time.Minute)
	}
	p := h.final(id)
	if p.Status != herald.StatusDone || p.Counts.Sent != 1 || p.Counts.Failed != 1 {
		t.Fatalf("after an hour: got %s with %+v, want done, 1 sent and 1 failed", p.Status, p.Counts)
	}
}
