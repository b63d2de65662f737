package delivery

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/fcm/emulator"
)

// gate holds the emulator's answer to the first send of chosen tokens until
// the test releases it, so a test can change a device while a wave of a
// push is in flight, at a known point.
type gate struct {
	arrived map[string]chan struct{}
	release map[string]chan struct{}
	once    map[string]*sync.Once
}

func newGate(tokens ...string) *gate {
	g := &gate{arrived: map[string]chan struct{}{}, release: map[string]chan struct{}{}, once: map[string]*sync.Once{}}
	for _, tok := range tokens {
		g.arrived[tok], g.release[tok], g.once[tok] = make(chan struct{}), make(chan struct{}), &sync.Once{}
	}
	return g
}

// beforeAnswer is the emulator's hook: the first send to a held token
// signals its arrival and waits for its release.
func (g *gate) beforeAnswer(token string) {
	once := g.once[token]
	if once == nil {
		return
	}
	first := false
	once.Do(func() { first = true; close(g.arrived[token]) })
	if first {
		<-g.release[token]
	}
}

// await waits until the first send to token is held.
func (g *gate) await(t *testing.T, token string) {
	t.Helper()
	select {
	case <-g.arrived[token]:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for a send to %s", token)
	}
}

// open lets the held send to token be answered.
func (g *gate) open(token string) { close(g.release[token]) }

// setUser maps a device to user, or unmaps it when user is nil, as the
// SDK's setUserId does.
func (h *harness) setUser(a harnessApp, deviceID string, user *string) {
	h.t.Helper()
	if _, err := h.store.SetDeviceUser(h.ctx, a.ID, deviceID, user); err != nil {
		h.t.Fatalf("set user of %s: %v", deviceID, err)
	}
}

// fillers registers n users f0…f<n-1>, token tok-f<i>, and returns them:
// a window of them makes a chunk's first wave of sends.
func (h *harness) fillers(a harnessApp, n int) []any {
	h.t.Helper()
	users := make([]any, n)
	for i := range users {
		u := fmt.Sprintf("f%d", i)
		h.device(a, "dev-"+u, "tok-"+u, "android", u)
		users[i] = u
	}
	return users
}

// TestDeviceHandedOverDuringFanout: a /messages message written for alice
// never reaches her device once it is handed to bob, nor carol's once she
// logs out, while the push's first wave is in flight.
func TestDeviceHandedOverDuringFanout(t *testing.T) {
	t.Parallel()
	const window = DefaultConcurrency
	g := newGate("tok-f0")
	h := newHarness(t, harnessOptions{emulator: emulator.Options{BeforeAnswer: g.beforeAnswer}})
	a := h.newApp(nil)
	users := h.fillers(a, window)
	h.device(a, "dev-alice", "tok-alice", "android", "alice")
	h.device(a, "dev-carol", "tok-carol", "android", "carol")
	h.device(a, "dev-bob", "tok-bob", "android", "bob")
	var msgs []any
	for _, u := range append(users, "alice", "carol") {
		msgs = append(msgs, map[string]any{"userId": u, "title": fmt.Sprint("for ", u), "content": "personal"})
	}
	id, err := h.accept(a, herald.KindMessages, map[string]any{"messages": msgs})
	must(t, err)
	wait := h.background()
	g.await(t, "tok-f0") // the first wave (the fillers' messages) is in flight
	bob := "bob"
	h.setUser(a, "dev-alice", &bob)
	h.setUser(a, "dev-carol", nil)
	g.open("tok-f0")
	wait()
	p := h.final(id)

	sent := h.sentTo(id)
	if sent["tok-alice"] != 0 || sent["tok-carol"] != 0 || sent["tok-bob"] != 0 {
		t.Errorf("messages by token: got %v, want none to the handed-over, logged-out or bob's devices", sent)
	}
	if p.Status != herald.StatusDone || p.Counts.Sent != window {
		t.Errorf("push: got %s with %+v, want done with %d sent", p.Status, p.Counts, window)
	}
	want := map[string]string{"alice": "NO_TOKEN", "carol": "NO_TOKEN"}
	if got := p.unreachable(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("unreachable: got %v, want %v", got, want)
	}
}

// TestTokenRefreshedDuringFanout: a user whose token is refreshed (same
// device, new token) or whose app is reinstalled (same token, new device)
// while the push fans out gets the message once, on the token held at send
// time, and is not reported unreachable.
func TestTokenRefreshedDuringFanout(t *testing.T) {
	t.Parallel()
	const window = DefaultConcurrency
	g := newGate("tok-f0")
	h := newHarness(t, harnessOptions{emulator: emulator.Options{BeforeAnswer: g.beforeAnswer}})
	a := h.newApp(nil)
	users := h.fillers(a, window)
	h.device(a, "dev-alice", "tok-alice-1", "android", "alice")
	h.device(a, "dev-dan", "tok-dan", "ios", "dan")
	id, err := h.accept(a, herald.KindUsers, map[string]any{"userIds": append(users, "alice", "dan"), "title": "t", "content": "c"})
	must(t, err)
	wait := h.background()
	g.await(t, "tok-f0")
	// Time passes during the fan-out: a device registered after it is
	// known by its later creation (the clock is frozen otherwise).
	h.clock.set(h.clock.Now().Add(time.Second))
	h.device(a, "dev-alice", "tok-alice-2", "android", "alice") // refresh
	h.device(a, "dev-dan-2", "tok-dan", "ios", "dan")           // reinstall
	g.open("tok-f0")
	wait()
	p := h.final(id)

	sent := h.sentTo(id)
	if sent["tok-alice-2"] != 1 || sent["tok-alice-1"] != 0 || sent["tok-dan"] != 1 || len(sent) != window+2 {
		t.Errorf("messages: got alice-2 %d, alice-1 %d, dan %d, %d tokens; want 1, 0, 1, %d",
			sent["tok-alice-2"], sent["tok-alice-1"], sent["tok-dan"], len(sent), window+2)
	}
	if p.Status != herald.StatusDone || p.Counts.Sent != window+2 || len(p.Unreachable) != 0 {
		t.Errorf("push: got %s, %+v, unreachable %v; want done, %d sent, none unreachable", p.Status, p.Counts, p.Unreachable, window+2)
	}
}

// TestAccessTokenRevokedDuringPush: FCM answering 401 UNAUTHENTICATED to a
// stale access token (its front end restarted) costs nothing: the token is
// dropped, a fresh one fetched and every send retried on it.
func TestAccessTokenRevokedDuringPush(t *testing.T) {
	t.Parallel()
	g := newGate("tok-f0")
	h := newHarness(t, harnessOptions{emulator: emulator.Options{BeforeAnswer: g.beforeAnswer}})
	a := h.newApp(nil)
	users := h.fillers(a, 120)
	id, err := h.accept(a, herald.KindUsers, map[string]any{"userIds": users, "title": "t", "content": "c"})
	must(t, err)
	wait := h.background()
	g.await(t, "tok-f0")
	h.emu.RevokeTokens() // the waves after the first meet a revoked token
	g.open("tok-f0")
	wait()
	p := h.final(id)
	if p.Status != herald.StatusDone || p.Counts.Sent != 120 || p.Counts.Failed != 0 {
		t.Errorf("push: got %s %q, %+v; want done with 120 sent", p.Status, p.FailureReason, p.Counts)
	}
	sent := h.sentTo(id)
	for _, u := range users {
		if sent[fmt.Sprint("tok-", u)] != 1 {
			t.Fatalf("messages to tok-%s: got %d, want 1", u, sent[fmt.Sprint("tok-", u)])
		}
	}
	if got := h.emu.TokenGrants(); got != 2 {
		t.Errorf("access tokens issued: got %d, want 2 (the first, one fresh)", got)
	}

	t.Run("FreshTokenRefused", func(t *testing.T) {
		b := h.newApp(nil)
		h.credentials(b.ID, "revoked-project") // FCM refuses every token of it
		h.device(b, "dev-x", "tok-x", "android", "x")
		p := h.final(h.pushUsers(b, "x"))
		if p.Status != herald.StatusFailed || !strings.Contains(p.FailureReason, "fresh access token was refused") {
			t.Errorf("push: got %s %q, want failed because a fresh token was refused", p.Status, p.FailureReason)
		}
	})
}
