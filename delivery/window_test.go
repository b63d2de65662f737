package delivery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// chunkStore is the part of the store a chunk's window uses: every user
// holds one device, dN with token tN, and AdvanceChunk keeps the chunk's
// cursor and range as the real store does, marking at most markLimit.
type chunkStore struct {
	SendStore // nil: any other method panics
	mu        sync.Mutex
	steps     []sendstore.ChunkStep
	settled, marked,
	markLimit int
	reads int // of devices
}

func (s *chunkStore) DevicesOfUsers(_ context.Context, _ string, users []string) (map[string][]herald.Device, error) {
	s.mu.Lock()
	s.reads++
	s.mu.Unlock()
	out := map[string][]herald.Device{}
	for _, u := range users {
		n := strings.TrimPrefix(u, "u")
		out[u] = []herald.Device{{ID: "d" + n, Token: "t" + n, UserID: &u, TokenUpdatedAt: time.Now()}}
	}
	return out, nil
}

func (s *chunkStore) AdvanceChunk(_ context.Context, _, _ string, st sendstore.ChunkStep) (int, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.Old.Settled != s.settled || st.Old.Marked != s.marked {
		return 0, false, sendstore.ErrChunkMoved
	}
	s.steps = append(s.steps, st)
	s.settled, s.marked = st.New.Settled, min(st.New.Marked, s.markLimit)
	return s.marked, false, nil
}

// retries returns the slots the steps settled into retry chunks.
func (s *chunkStore) retries() []herald.Delivery {
	var out []herald.Delivery
	for _, st := range s.steps {
		if st.Retry != nil {
			out = append(out, st.Retry.Slots...)
		}
	}
	return out
}

// blockingSender answers every send at once, except those to tokens in
// hold, which wait until release is closed; tokens in dead are unregistered.
type blockingSender struct {
	hold    map[string]bool
	dead    map[string]bool
	release chan struct{}
	mu      sync.Mutex
	sent    []string
}

func (b *blockingSender) ForApp(string, []byte) herald.AppSender { return b }

func (b *blockingSender) Authorize(context.Context) error { return nil }

func (b *blockingSender) Deliver(_ context.Context, n herald.Notification) error {
	if b.hold[n.Token] {
		<-b.release
	}
	b.mu.Lock()
	b.sent = append(b.sent, n.Token)
	b.mu.Unlock()
	if b.dead[n.Token] {
		return &herald.SendError{Class: herald.SendUnregistered, Err: fmt.Errorf("UNREGISTERED")}
	}
	return nil
}

// slots returns n pending slots of chunk 0, user uI with device dI and token tI.
func slots(n int) []herald.Delivery {
	ds := make([]herald.Delivery, n)
	for i := range ds {
		ds[i] = herald.Delivery{Seq: i, UserID: fmt.Sprint("u", i), DeviceID: fmt.Sprint("d", i), Token: fmt.Sprint("t", i),
			TokenUpdatedAt: time.Now(), State: herald.DeliveryPending}
	}
	return ds
}

func newChunk(store SendStore, sender Sender, concurrency int) *chunk {
	s := New(Config{Sender: sender, Concurrency: concurrency})
	s.sends = store // all a chunk's run reaches
	return &chunk{s: s, app: herald.App{ID: "app_1"}, push: herald.Push{ID: "push_1", Kind: herald.KindUsers},
		loc: time.UTC, yieldAt: time.Now().Add(time.Hour), sender: sender.ForApp("app_1", nil)}
}

// TestWindowSlowSend holds the first send: the others go on, but never more
// than the window past the first send without an outcome, so a crash
// could resend no more than the window.
func TestWindowSlowSend(t *testing.T) {
	t.Parallel()
	const window, n = 4, 12
	store := &chunkStore{markLimit: n}
	sender := &blockingSender{hold: map[string]bool{"t0": true}, release: make(chan struct{})}
	c := newChunk(store, sender, window)
	var res chunkResult
	done := make(chan struct{})
	go func() {
		res = c.sendSlots(context.Background(), 0, sendstore.ChunkWork{Slots: slots(n)})
		close(done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		sender.mu.Lock()
		got := len(sender.sent)
		sender.mu.Unlock()
		if got == window-1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sent while the first is held: got %d, want %d", got, window-1)
		}
		time.Sleep(time.Millisecond) // the poll interval; the deadline above bounds the wait
	}
	store.mu.Lock()
	if store.marked != window {
		t.Errorf("marked while the first is held: got %d, want %d (the window)", store.marked, window)
	}
	store.mu.Unlock()
	close(sender.release)
	<-done
	if res.err != nil || res.stopped || res.again {
		t.Fatalf("result: got %+v, want done", res)
	}
	if store.settled != n || store.marked != n {
		t.Errorf("chunk: got settled %d, marked %d, want %d and %d", store.settled, store.marked, n, n)
	}
	for _, st := range store.steps {
		if st.New.Marked-st.New.Settled > window {
			t.Errorf("step %+v: %d slots unsettled and marked, want at most %d", st, st.New.Marked-st.New.Settled, window)
		}
		if len(st.Rows) != 0 {
			t.Errorf("step %+v: got rows, want none (every send was sent)", st)
		}
	}
	if len(store.steps) > n/(window/2)+1 {
		t.Errorf("writes: got %d steps for %d slots, want a write per batch, not per slot", len(store.steps), n)
	}
}

// TestWindowRowsOnlyForExceptions: a dead token gets a row and is dropped;
// the sent ones are counted by the cursor alone.
func TestWindowRowsOnlyForExceptions(t *testing.T) {
	t.Parallel()
	store := &chunkStore{markLimit: 10}
	sender := &blockingSender{dead: map[string]bool{"t3": true}}
	newChunk(store, sender, 4).sendSlots(context.Background(), 0, sendstore.ChunkWork{Slots: slots(10)})
	var rows []herald.Delivery
	var drops []sendstore.DeadToken
	for _, st := range store.steps {
		rows, drops = append(rows, st.Rows...), append(drops, st.Drop...)
	}
	if len(rows) != 1 || rows[0].Seq != 3 || rows[0].State != herald.DeliveryUndeliverable || rows[0].Reason != herald.ReasonAppDeleted {
		t.Errorf("rows: got %+v, want seq 3 undeliverable", rows)
	}
	if len(drops) != 1 || drops[0].DeviceID != "d3" || drops[0].Token != "t3" {
		t.Errorf("drops: got %+v, want d3's t3", drops)
	}
	if store.settled != 10 {
		t.Errorf("settled: got %d, want 10", store.settled)
	}
}

// TestWindowDeviceChanged: when the store marks fewer slots than asked (a
// device changed between judge and mark), the rest is not sent and the
// chunk is judged again after a pause.
func TestWindowDeviceChanged(t *testing.T) {
	t.Parallel()
	store := &chunkStore{markLimit: 2}
	sender := &blockingSender{}
	res := newChunk(store, sender, 4).sendSlots(context.Background(), 0, sendstore.ChunkWork{Slots: slots(10)})
	slices.Sort(sender.sent)
	if !slices.Equal(sender.sent, []string{"t0", "t1"}) {
		t.Errorf("sent: got %v, want only the two marked", sender.sent)
	}
	if !res.again || res.wait < time.Second || store.settled != 2 {
		t.Errorf("got %+v, settled %d; want to come back after a pause, the two settled", res, store.settled)
	}
}

// TestWindowJudgedAsPlanned: a push without advertising is judged as
// planned, its devices not read, until the guarded write refuses a target;
// from then on the run reads them. Advertising is always judged on the
// devices now (consent).
func TestWindowJudgedAsPlanned(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		title     string
		markLimit int
		wantReads bool
	}{
		{"Plain", "hello", 10, false},
		{"PlainDeviceChanged", "hello", 4, true},
		{"Advertising", "(광고) sale", 10, true},
	} {
		store := &chunkStore{markLimit: tt.markLimit}
		c := newChunk(store, &blockingSender{}, 4)
		c.push.Content.Title = tt.title
		c.push.Marketing = herald.IsMarketingTitle(tt.title)
		c.sendSlots(context.Background(), 0, sendstore.ChunkWork{Slots: slots(10)})
		if got := store.reads > 0; got != tt.wantReads {
			t.Errorf("%s: got %d reads of devices, want any: %v", tt.name, store.reads, tt.wantReads)
		}
		if store.marked != tt.markLimit {
			t.Errorf("%s: marked %d, want %d", tt.name, store.marked, tt.markLimit)
		}
	}
}

// TestWindowMoved: another run wrote the chunk; this one sends nothing.
func TestWindowMoved(t *testing.T) {
	t.Parallel()
	store := &chunkStore{markLimit: 10, settled: 5, marked: 5}
	sender := &blockingSender{}
	res := newChunk(store, sender, 4).sendSlots(context.Background(), 0, sendstore.ChunkWork{Slots: slots(10)})
	if len(sender.sent) != 0 || !res.stopped {
		t.Errorf("got %d sent, stopped %v; want none sent, stopped", len(sender.sent), res.stopped)
	}
}

// cutSender holds the sends to token cut until their context ends, and
// answers them with its error; the others are sent at once.
type cutSender struct {
	blockingSender
	cut string
}

func (s *cutSender) ForApp(string, []byte) herald.AppSender { return s }

func (s *cutSender) Deliver(ctx context.Context, n herald.Notification) error {
	if n.Token == s.cut {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.blockingSender.Deliver(ctx, n)
}

// TestWindowCutOff: a send cut off by the end of the job's context may
// have reached FCM: it is settled into a retry chunk due at once, marked
// resent, its failed attempts unchanged; the sends that came back are
// settled as they are.
func TestWindowCutOff(t *testing.T) {
	t.Parallel()
	store := &chunkStore{markLimit: 4}
	sender := &cutSender{cut: "t1"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan chunkResult)
	go func() { done <- newChunk(store, sender, 4).sendSlots(ctx, 0, sendstore.ChunkWork{Slots: slots(4)}) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		sender.mu.Lock()
		got := len(sender.sent)
		sender.mu.Unlock()
		if got == 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond) // the poll interval; the deadline above bounds the wait
	}
	cancel()
	res := <-done
	if !errors.Is(res.err, context.Canceled) {
		t.Errorf("result: got %+v, want the context's end", res)
	}
	retry := store.retries()
	if len(retry) != 1 || retry[0].Seq != 1 || !retry[0].Resent || retry[0].Attempts != 0 {
		t.Fatalf("retries: got %+v, want seq 1, resent, no failed attempt", retry)
	}
	last := store.steps[len(store.steps)-1]
	if store.settled != 4 || time.Until(retryAt(t, last)) > time.Second {
		t.Errorf("got settled %d, retry due %v; want all 4 settled, the retry due at once", store.settled, retryAt(t, last))
	}
}

// retryAt returns when the retry chunk of a step is due.
func retryAt(t *testing.T, st sendstore.ChunkStep) time.Time {
	t.Helper()
	if st.Retry == nil {
		t.Fatalf("step %+v: no retry chunk", st)
	}
	return st.Retry.Job.(SendArgs).Due
}

// outageStore is a chunkStore whose writes fail as unavailable from its
// second write on, until its clock reaches the end of the outage.
type outageStore struct {
	chunkStore
	clock  *fakeClock
	outage time.Duration
	upAt   time.Time
	writes int
}

func (s *outageStore) AdvanceChunk(ctx context.Context, app, push string, st sendstore.ChunkStep) (int, bool, error) {
	s.writes++
	if s.writes == 2 {
		s.upAt = s.clock.Now().Add(s.outage)
	}
	if s.writes >= 2 && s.clock.Now().Before(s.upAt) {
		return 0, false, herald.Unavailable(errors.New("connection refused"))
	}
	return s.chunkStore.AdvanceChunk(ctx, app, push, st)
}

// TestWindowKeepsOutcomesThroughAnOutage: the database goes away after
// the sends were marked and before their outcomes are written, for 40 s
// (a restart, a failover): the run keeps the outcomes and writes them
// when it answers again, so a node that stays up resends nothing.
func TestWindowKeepsOutcomesThroughAnOutage(t *testing.T) {
	t.Parallel()
	const n = 10
	p, clock := fakePacer()
	store := &outageStore{chunkStore: chunkStore{markLimit: n}, clock: clock, outage: 40 * time.Second}
	c := newChunk(store, &blockingSender{}, n)
	c.s.pace = p
	res := c.sendSlots(context.Background(), 0, sendstore.ChunkWork{Slots: slots(n)})
	if res.err != nil || store.settled != n {
		t.Fatalf("got %d settled (%v) after a 40 s outage, want all %d outcomes written once it ended", store.settled, res.err, n)
	}
}
