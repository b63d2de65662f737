package delivery

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/fcm/emulator"
)

// wave holds the emulator's answers to the first n sends until released,
// so a test can change users while a chunk's first window is in flight.
type wave struct {
	n       int
	mu      sync.Mutex
	seen    int
	full    chan struct{} // closed when n sends are held
	release chan struct{}
}

func newWave(n int) *wave {
	return &wave{n: n, full: make(chan struct{}), release: make(chan struct{})}
}

func (w *wave) beforeAnswer(string) {
	w.mu.Lock()
	w.seen++
	held, last := w.seen <= w.n, w.seen == w.n
	w.mu.Unlock()
	if last {
		close(w.full)
	}
	if held {
		<-w.release
	}
}

// await waits until the wave's n sends are held.
func (w *wave) await(t *testing.T) {
	t.Helper()
	select {
	case <-w.full:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %d sends", w.n)
	}
}

// TestSendTimeChecks changes users while their push is on its way: the
// first wave (a window of sends) is held by the emulator, and the second
// wave is judged again when it goes out: a withdrawn user and one who
// opted out of marketing meanwhile are sent nothing.
func TestSendTimeChecks(t *testing.T) {
	t.Parallel()
	const window = DefaultConcurrency
	w := newWave(window)
	h := newHarness(t, harnessOptions{now: time.Date(2026, 12, 1, 14, 0, 0, 0, seoul), emulator: emulator.Options{BeforeAnswer: w.beforeAnswer}})
	a := h.newApp(func(a *herald.App) { a.AppUserEnabled = true })
	on, off := true, false
	users := make([]any, window+10)
	for i := range users {
		u := fmt.Sprintf("u%d", i)
		users[i] = u
		h.register(a, "tok-", u)
		h.consent(a, u, herald.ConsentChange{Marketing: &on})
	}
	id, err := h.accept(a, herald.KindUsers, map[string]any{"userIds": users, "title": "(광고) sale", "content": "now"})
	must(t, err)
	wait := h.background()
	w.await(t)
	withdrawn, optedOut := fmt.Sprintf("u%d", window+5), fmt.Sprintf("u%d", window+6)
	must(t, h.store.WithdrawUser(h.ctx, a.ID, withdrawn))
	h.consent(a, optedOut, herald.ConsentChange{Marketing: &off})
	close(w.release)
	wait()
	p := h.final(id)
	if nw, no := len(h.emu.Messages("tok-"+withdrawn)), len(h.emu.Messages("tok-"+optedOut)); nw != 0 || no != 0 {
		t.Fatalf("messages to the withdrawn user: got %d, to the opted-out user: got %d, want none (%s)", nw, no, h.logs())
	}
	if p.Counts.Sent != len(users)-2 || p.Counts.SuppressedConsent != 1 || p.Counts.Unreachable != 1 {
		t.Fatalf("counts: got %+v, want %d sent, 1 suppressed by consent, 1 unreachable", p.Counts, len(users)-2)
	}
}
