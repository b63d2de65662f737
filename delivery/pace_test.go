package delivery

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// paceEpoch is the start of the pacer's fake clock: after the real now, so
// that a run's yield time set from it is not passed in real time either.
var paceEpoch = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

// aboutMinute reports whether d is a minute, give or take float rounding.
func aboutMinute(d time.Duration) bool {
	return d > time.Minute-time.Millisecond && d < time.Minute+time.Millisecond
}

// fakeClock is the pacer's clock in tests: sleeping moves it on at once.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep moves the clock to the end of the wait, if no other sleeper has
// moved it further.
func (c *fakeClock) Sleep(from time.Time) func(context.Context, time.Duration) error {
	return func(ctx context.Context, d time.Duration) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.slept += d
		if end := from.Add(d); end.After(c.now) {
			c.now = end
		}
		return nil
	}
}

// fakePacer is a pacer on a fake clock: each wait ends at once, the clock
// moved to the wait's end.
func fakePacer() (*pacer, *fakeClock) {
	c := &fakeClock{now: paceEpoch}
	p := newPacer(0)
	p.now = c.Now
	p.sleep = func(ctx context.Context, d time.Duration) error { return c.Sleep(c.Now())(ctx, d) }
	return p, c
}

func TestBucketReserve(t *testing.T) {
	t.Parallel()
	far := paceEpoch.Add(time.Hour)
	t.Run("LowRateOneByOne", func(t *testing.T) {
		b := newBucket(10, paceEpoch) // 600 a minute: the bucket holds 1
		for i, want := range []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond} {
			k, wait := b.reserve(25, paceEpoch, far)
			if k != 1 || wait != want {
				t.Errorf("reservation %d: got %d after %v, want 1 after %v (in the order made)", i, k, wait, want)
			}
		}
	})
	t.Run("HighRateWholeBatches", func(t *testing.T) {
		b := newBucket(10_000, paceEpoch) // FCM's quota: the bucket holds 1,000
		for i := range 40 {
			if k, wait := b.reserve(25, paceEpoch, far); k != 25 || wait != 0 {
				t.Fatalf("batch %d: got %d after %v, want 25 at once", i, k, wait)
			}
		}
		if k, wait := b.reserve(25, paceEpoch, far); k != 25 || wait != 2500*time.Microsecond {
			t.Errorf("past the bucket: got %d after %v, want 25 after 2.5ms", k, wait)
		}
	})
	t.Run("TakesWhatIsThere", func(t *testing.T) {
		b := newBucket(100, paceEpoch) // holds 10
		if k, _ := b.reserve(4, paceEpoch, far); k != 4 {
			t.Fatalf("got %d, want 4", k)
		}
		// 6 left; 0.05 s later 5 more came in (capped at 10).
		if k, wait := b.reserve(50, paceEpoch.Add(50*time.Millisecond), far); k != 10 || wait != 0 {
			t.Errorf("got %d after %v, want the 10 at hand at once", k, wait)
		}
	})
	t.Run("NotBeforeUntil", func(t *testing.T) {
		b := newBucket(1.0/60, paceEpoch) // 1 a minute
		if k, _ := b.reserve(5, paceEpoch, far); k != 1 {
			t.Fatalf("first: got %d, want 1", k)
		}
		until := paceEpoch.Add(30 * time.Second)
		for range 2 { // a refused reservation takes nothing
			if k, wait := b.reserve(5, paceEpoch, until); k != 0 || !aboutMinute(wait) {
				t.Errorf("due after until: got %d, wait %v; want 0, 1m", k, wait)
			}
		}
		if k, wait := b.reserve(5, paceEpoch.Add(time.Minute), until); k != 1 || wait != 0 {
			t.Errorf("a minute on: got %d after %v, want 1 at once", k, wait)
		}
	})
	t.Run("SetRate", func(t *testing.T) {
		b := newBucket(10_000, paceEpoch)
		b.setRate(10, paceEpoch)
		if b.burst != 1 || b.tokens != 1 {
			t.Errorf("lowered: got burst %v tokens %v, want 1 and 1", b.burst, b.tokens)
		}
		b.reserve(1, paceEpoch, far)
		b.setRate(100, paceEpoch.Add(100*time.Millisecond)) // 1 came in at 10/s first
		if b.burst != 10 || b.tokens != 1 {
			t.Errorf("raised: got burst %v tokens %v, want 10 and 1", b.burst, b.tokens)
		}
	})
	t.Run("PutCapped", func(t *testing.T) {
		b := newBucket(100, paceEpoch)
		b.reserve(10, paceEpoch, far)
		b.put(4)
		b.put(40)
		if b.tokens != 10 {
			t.Errorf("got %v tokens, want 10 (the bucket's size)", b.tokens)
		}
	})
}

// TestBucketNeverAhead: whatever the batches asked, the sends granted by
// any moment t are at most the bucket plus t times the rate.
func TestBucketNeverAhead(t *testing.T) {
	t.Parallel()
	for _, perSec := range []float64{0.5, 10, 250, 10_000} {
		b := newBucket(perSec, paceEpoch)
		type grant struct {
			at time.Time
			k  int
		}
		var grants []grant
		now := paceEpoch
		for i := range 2000 {
			n := 1 + i*7%50 // batches of 1 to 50
			k, wait := b.reserve(n, now, now.Add(1000*time.Hour))
			if k < 1 || k > n {
				t.Fatalf("rate %v: got %d of %d", perSec, k, n)
			}
			grants = append(grants, grant{now.Add(wait), k})
			now = now.Add(time.Duration(i%3) * time.Millisecond) // callers at any pace
		}
		total := 0
		for _, g := range grants {
			total += g.k
			if limit := burstOf(perSec) + g.at.Sub(paceEpoch).Seconds()*perSec; float64(total) > limit+1e-6 {
				t.Fatalf("rate %v: %d granted by %v, want at most %.1f", perSec, total, g.at.Sub(paceEpoch), limit)
			}
		}
	}
}

func TestPacerTake(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	app := herald.App{ID: "app_1", SendRatePerMinute: 600}
	far := paceEpoch.Add(time.Hour)
	t.Run("Paced", func(t *testing.T) {
		p, clock := fakePacer()
		for range 11 {
			if k, _, err := p.take(ctx, app, "", 25, far, false); k != 1 || err != nil {
				t.Fatalf("got (%d, %v), want 1", k, err)
			}
		}
		if clock.slept != time.Second {
			t.Errorf("11 sends at 10 a second: waited %v, want 1s", clock.slept)
		}
	})
	t.Run("AppsApart", func(t *testing.T) {
		p, clock := fakePacer()
		other := herald.App{ID: "app_2", SendRatePerMinute: 600}
		for _, a := range []herald.App{app, other} {
			if k, _, _ := p.take(ctx, a, "", 1, far, false); k != 1 {
				t.Fatalf("%s: got %d, want 1", a.ID, k)
			}
		}
		if clock.slept != 0 {
			t.Errorf("one send of each app: waited %v, want no wait", clock.slept)
		}
	})
	t.Run("RateChanged", func(t *testing.T) {
		p, clock := fakePacer()
		p.take(ctx, app, "", 1, far, false)
		faster := app
		faster.SendRatePerMinute = 6000 // 100 a second
		p.take(ctx, faster, "", 1, far, false)
		if clock.slept != 10*time.Millisecond {
			t.Errorf("next send at the new rate: waited %v, want 10ms", clock.slept)
		}
	})
	t.Run("DefaultRate", func(t *testing.T) {
		p, clock := fakePacer()
		for range 40 {
			if k, _, _ := p.take(ctx, herald.App{ID: "app_d"}, "", 25, far, false); k != 25 {
				t.Fatalf("got %d, want 25", k)
			}
		}
		if clock.slept != 0 {
			t.Errorf("1,000 sends at FCM's quota: waited %v, want none (the bucket holds 1,000)", clock.slept)
		}
	})
	t.Run("SharedByNodes", func(t *testing.T) {
		p, clock := fakePacer()
		p.nodes.Store(2)
		for range 3 {
			p.take(ctx, app, "", 1, far, false)
		}
		if clock.slept != 400*time.Millisecond {
			t.Errorf("3 sends at 5 a second (half of 10): waited %v, want 400ms", clock.slept)
		}
	})
	t.Run("Cancelled", func(t *testing.T) {
		p, clock := fakePacer()
		p.take(ctx, app, "", 1, far, false)
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if k, _, err := p.take(cancelled, app, "", 1, far, false); k != 0 || !errors.Is(err, context.Canceled) {
			t.Fatalf("got (%d, %v), want 0 and context.Canceled", k, err)
		}
		// The token given back: the next send waits for it only.
		p.take(ctx, app, "", 1, far, false)
		if clock.slept != 100*time.Millisecond {
			t.Errorf("after a cancelled wait: waited %v, want 100ms", clock.slept)
		}
	})
	t.Run("UntilPassed", func(t *testing.T) {
		p, _ := fakePacer()
		p.take(ctx, app, "", 1, far, false)
		k, wait, err := p.take(ctx, app, "", 1, paceEpoch.Add(50*time.Millisecond), false)
		if k != 0 || wait != 100*time.Millisecond || err != nil {
			t.Errorf("got (%d, %v, %v), want 0 and a wait of 100ms", k, wait, err)
		}
	})
}

// TestWindowPaced: a chunk of an app at 600 a minute marks and sends its
// slots one by one, a tenth of a second apart on the pacer's clock, and
// the sends judged needless give their tokens back.
func TestWindowPaced(t *testing.T) {
	t.Parallel()
	const n = 10
	store := &chunkStore{markLimit: n}
	sender := &blockingSender{}
	c := newChunk(store, sender, 4)
	c.app.SendRatePerMinute = 600
	p, clock := fakePacer()
	c.s.pace = p
	c.yieldAt = paceEpoch.Add(time.Hour)
	res := c.sendSlots(context.Background(), 0, sendstore.ChunkWork{Slots: slots(n)})
	if res.err != nil || res.again || store.settled != n || len(sender.sent) != n {
		t.Fatalf("got %+v, settled %d, %d sent; want all %d sent", res, store.settled, len(sender.sent), n)
	}
	for _, st := range store.steps {
		if st.New.Marked-st.Old.Marked > 1 {
			t.Errorf("step %+v: marked %d, want one at a time", st, st.New.Marked-st.Old.Marked)
		}
	}
	if clock.slept != 900*time.Millisecond {
		t.Errorf("10 sends at 10 a second: waited %v, want 900ms", clock.slept)
	}
}

// TestWindowPacedYields: when the next token is due after the run's yield
// time, the run stops without marking, and says when to come back.
func TestWindowPacedYields(t *testing.T) {
	t.Parallel()
	store := &chunkStore{markLimit: 10}
	sender := &blockingSender{}
	c := newChunk(store, sender, 4)
	c.app.SendRatePerMinute = 1
	p, clock := fakePacer()
	c.s.pace = p
	c.yieldAt = paceEpoch.Add(30 * time.Second)
	res := c.sendSlots(context.Background(), 0, sendstore.ChunkWork{Slots: slots(10)})
	if len(sender.sent) != 1 || store.marked != 1 || store.settled != 1 {
		t.Errorf("got %d sent, marked %d, settled %d; want the one the bucket held", len(sender.sent), store.marked, store.settled)
	}
	if res.err != nil || !res.again || !aboutMinute(res.wait) || clock.slept != 0 {
		t.Errorf("got %+v after waiting %v; want to come back in a minute, no wait", res, clock.slept)
	}
}

// nodeStore counts the other nodes as given and records the calls; its
// beats fail while down.
type nodeStore struct {
	mu       sync.Mutex
	others   int
	down     bool
	beats    []string
	left     []string
	released []time.Time // the before of each ReleaseDeadNodes
}

func (s *nodeStore) Heartbeat(_ context.Context, node string, at, since time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if at.Sub(since) != nodeLiveFor {
		return 0, errors.New("since is not 15 s before at")
	}
	if s.down {
		return 0, herald.ErrUnavailable
	}
	s.beats = append(s.beats, node)
	return s.others + 1, nil
}

func (s *nodeStore) ReleaseDeadNodes(_ context.Context, before, at time.Time) ([]string, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if at.Sub(before) != nodeDeadAfter {
		return nil, 0, errors.New("before is not nodeDeadAfter before at")
	}
	s.released = append(s.released, before)
	return nil, 0, nil
}

func (s *nodeStore) LeaveNodes(_ context.Context, node string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.left = append(s.left, node)
	return nil
}

// TestHeartbeat: the first beat, at start, shares the rates among the
// nodes alive; stopping removes the node.
func TestHeartbeat(t *testing.T) {
	t.Parallel()
	s := New(Config{Logger: slog.New(slog.DiscardHandler)})
	nodes := &nodeStore{others: 2}
	stop := s.StartHeartbeat(nodes, "node_a")
	deadline := time.Now().Add(10 * time.Second)
	for s.pace.nodes.Load() != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("nodes: got %d, want 3 after the first beat", s.pace.nodes.Load())
		}
		time.Sleep(time.Millisecond) // the poll interval; the deadline bounds the wait
	}
	stop()
	nodes.mu.Lock()
	defer nodes.mu.Unlock()
	if len(nodes.beats) == 0 || nodes.beats[0] != "node_a" || len(nodes.left) != 1 || nodes.left[0] != "node_a" {
		t.Errorf("got beats %v, left %v; want node_a beating, then leaving", nodes.beats, nodes.left)
	}
}

// TestHeartbeatJudgesDeathAfterAnUnbrokenRun: a node releases the nodes
// silent for nodeDeadAfter only once its own beats have been written for
// as long without a break: at its start, and after an outage that kept
// every node's beat from the database, none is judged dead before the
// live ones had time to beat again.
func TestHeartbeatJudgesDeathAfterAnUnbrokenRun(t *testing.T) {
	t.Parallel()
	s := New(Config{Logger: slog.New(slog.DiscardHandler)})
	p, clock := fakePacer()
	s.pace = p
	nodes := &nodeStore{}
	var run beatRun
	beats := func(n int) {
		for range n {
			s.beat(context.Background(), nodes, "node_a", &run)
			clock.now = clock.now.Add(heartbeatEvery)
		}
	}
	released := func() int {
		nodes.mu.Lock()
		defer nodes.mu.Unlock()
		return len(nodes.released)
	}
	judging := int(nodeDeadAfter / heartbeatEvery) // beats before the run is long enough
	for _, step := range []struct {
		when     string
		down     bool // the database away: every node's beat fails
		beats    int
		released int
	}{
		{"within nodeDeadAfter of the first beat", false, judging, 0},
		{"nodeDeadAfter into an unbroken run", false, 1, 1},
		{"while the database is away", true, 5, 1},
		{"within nodeDeadAfter after the outage", false, judging, 1},
		{"nodeDeadAfter after the outage", false, 1, 2},
	} {
		nodes.mu.Lock()
		nodes.down = step.down
		nodes.mu.Unlock()
		beats(step.beats)
		if n := released(); n != step.released {
			t.Fatalf("%s: released %d times, want %d", step.when, n, step.released)
		}
	}
}

// TestPacerProject: apps of one FCM project share the project's rate,
// whichever of it and each app's rate is lower; apps of other projects and
// apps without one are paced apart; nodes share the project rate as they
// share an app's.
func TestPacerProject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	far := paceEpoch.Add(time.Hour)
	fast := func(id string) herald.App { return herald.App{ID: id, SendRatePerMinute: 600_000} }
	projectPacer := func(perMinute int) (*pacer, *fakeClock) {
		p, clock := fakePacer()
		p.projectRate = perMinute
		return p, clock
	}
	t.Run("TwoAppsShare", func(t *testing.T) {
		p, clock := projectPacer(600) // 10 a second; each app alone could send 10,000
		for i := range 11 {
			app := fast([]string{"app_a", "app_b"}[i%2])
			if k, _, err := p.take(ctx, app, "proj", 25, far, false); k != 1 || err != nil {
				t.Fatalf("send %d: got (%d, %v), want 1", i, k, err)
			}
		}
		if clock.slept != time.Second {
			t.Errorf("11 sends of two apps at 10 a second for the project: waited %v, want 1s", clock.slept)
		}
	})
	t.Run("OtherProjectsApart", func(t *testing.T) {
		p, clock := projectPacer(600)
		for _, project := range []string{"proj-1", "proj-2", ""} {
			if k, _, _ := p.take(ctx, fast("app_"+project), project, 1, far, false); k != 1 {
				t.Fatalf("%q: got %d, want 1", project, k)
			}
		}
		if clock.slept != 0 {
			t.Errorf("one send in each project: waited %v, want none", clock.slept)
		}
	})
	t.Run("AppRateLower", func(t *testing.T) {
		p, clock := projectPacer(600_000)
		app := herald.App{ID: "app_slow", SendRatePerMinute: 600}
		for range 11 {
			p.take(ctx, app, "proj", 25, far, false)
		}
		if clock.slept != time.Second {
			t.Errorf("an app at 10 a second in a fast project: waited %v, want 1s", clock.slept)
		}
	})
	t.Run("BatchCutToProjectBucket", func(t *testing.T) {
		p, _ := projectPacer(1200) // 20 a second: the project bucket holds 2
		if k, _, _ := p.take(ctx, fast("app_a"), "proj", 25, far, false); k != 2 {
			t.Errorf("first batch: got %d, want the 2 the project bucket holds", k)
		}
		// The app's bucket got back the 23 the project did not allow.
		if b := p.buckets["app_a"]; b.tokens != b.burst-2 {
			t.Errorf("app bucket: got %v tokens, want %v", b.tokens, b.burst-2)
		}
	})
	t.Run("SharedByNodes", func(t *testing.T) {
		p, clock := projectPacer(600)
		p.nodes.Store(2)
		for range 3 {
			p.take(ctx, fast("app_a"), "proj", 1, far, false)
		}
		if clock.slept != 400*time.Millisecond {
			t.Errorf("3 sends at 5 a second (half of 10): waited %v, want 400ms", clock.slept)
		}
	})
	t.Run("UntilPassedGivesBack", func(t *testing.T) {
		p, _ := projectPacer(600)
		p.take(ctx, fast("app_a"), "proj", 1, far, false)
		k, wait, err := p.take(ctx, fast("app_a"), "proj", 1, paceEpoch.Add(50*time.Millisecond), false)
		if k != 0 || wait != 100*time.Millisecond || err != nil {
			t.Errorf("got (%d, %v, %v), want 0 and a wait of 100ms", k, wait, err)
		}
		if b := p.buckets["app_a"]; b.tokens != b.burst-1 {
			t.Errorf("app bucket: got %v tokens, want its token back (%v)", b.tokens, b.burst-1)
		}
	})
	t.Run("CancelledGivesBack", func(t *testing.T) {
		p, clock := projectPacer(600)
		p.take(ctx, fast("app_a"), "proj", 1, far, false)
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if k, _, err := p.take(cancelled, fast("app_b"), "proj", 1, far, false); k != 0 || !errors.Is(err, context.Canceled) {
			t.Fatalf("got (%d, %v), want 0 and context.Canceled", k, err)
		}
		p.take(ctx, fast("app_a"), "proj", 1, far, false)
		if clock.slept != 100*time.Millisecond {
			t.Errorf("after a cancelled wait: waited %v, want 100ms", clock.slept)
		}
	})
}

// TestPacerProjectOf: the project is read from the service-account file,
// again when the file changes; a file without one names none.
func TestPacerProjectOf(t *testing.T) {
	t.Parallel()
	p := newPacer(0)
	if got := p.projectOf("app_a", []byte(`{"type":"service_account","project_id":"proj-1"}`)); got != "proj-1" {
		t.Errorf("got %q, want proj-1", got)
	}
	if got := p.projectOf("app_a", []byte(`{"project_id":"proj-2"}`)); got != "proj-2" {
		t.Errorf("new file: got %q, want proj-2", got)
	}
	if got := p.projectOf("app_b", []byte(`not json`)); got != "" {
		t.Errorf("unreadable: got %q, want none", got)
	}
	if p.projectRate != herald.DefaultFCMProjectRate {
		t.Errorf("default rate: got %d, want %d", p.projectRate, herald.DefaultFCMProjectRate)
	}
}

// heldPacer is a pacer whose clock stands still while its takers wait:
// each wait is recorded, not slept, so that reservations pile up ahead
// as they do when many runs take at once.
func heldPacer(projectRate int) (*pacer, *fakeClock, *[]time.Duration) {
	c := &fakeClock{now: paceEpoch}
	p := newPacer(projectRate)
	p.now = c.Now
	var waits []time.Duration
	p.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	return p, c, &waits
}

// TestPacerHigh: a high-priority send never waits behind the normal
// reservations queued on a bucket (it takes the reserve's token), and the
// normal sends after it wait for what it took; alone, high sends have the
// whole rate.
func TestPacerHigh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	far := paceEpoch.Add(time.Hour)
	fast := herald.App{ID: "app_a", SendRatePerMinute: 600_000}
	t.Run("AheadOfNormal", func(t *testing.T) {
		p, _, waits := heldPacer(600) // 10 a second; the reserve 1 a second
		for range 5 {
			p.take(ctx, fast, "proj", 1, far, false)
		}
		k, wait, err := p.take(ctx, fast, "proj", 1, far, true)
		if k != 1 || wait != 0 || err != nil {
			t.Fatalf("high send behind 5 normal ones: got (%d, %v, %v), want 1 at once", k, wait, err)
		}
		p.take(ctx, fast, "proj", 1, far, false)
		want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 400 * time.Millisecond,
			600 * time.Millisecond} // the first went at once; the last waits for the high send's token too
		if !slices.Equal(*waits, want) {
			t.Errorf("waits: got %v, want %v", *waits, want)
		}
	})
	t.Run("AppRate", func(t *testing.T) {
		p, _, waits := heldPacer(0)
		slow := herald.App{ID: "app_s", SendRatePerMinute: 600}
		for range 3 {
			p.take(ctx, slow, "proj", 1, far, false)
		}
		if k, wait, _ := p.take(ctx, slow, "proj", 1, far, true); k != 1 || wait != 0 {
			t.Errorf("high send behind the app's normal ones: got (%d, %v), want 1 at once; waits %v", k, wait, *waits)
		}
	})
	t.Run("AloneWholeRate", func(t *testing.T) {
		p, clock := fakePacer()
		p.projectRate = 600
		for range 11 {
			if k, _, _ := p.take(ctx, fast, "proj", 1, far, true); k != 1 {
				t.Fatalf("got %d, want 1", k)
			}
		}
		if clock.slept != time.Second {
			t.Errorf("11 high sends alone at 10 a second: waited %v, want 1s (the whole rate)", clock.slept)
		}
	})
	t.Run("ATenth", func(t *testing.T) {
		// Four normal takers and one high one, each taking again as soon
		// as its last send is due, for 100 seconds at 10 a second.
		p, clock, waits := heldPacer(600)
		const seconds, rate = 100, 10
		end := paceEpoch.Add(seconds * time.Second)
		next := make([]time.Time, 5) // the last is the high taker
		for i := range next {
			next[i] = paceEpoch
		}
		var normal, high int
		for {
			i := -1 // the taker whose last send is due first, among those not past the end
			for j := range next {
				if next[j].Before(end) && (i < 0 || next[j].Before(next[i])) {
					i = j
				}
			}
			if i < 0 {
				break
			}
			clock.mu.Lock()
			clock.now = next[i]
			clock.mu.Unlock()
			*waits = nil
			p.take(ctx, fast, "proj", 1, far, i == len(next)-1)
			var wait time.Duration
			if len(*waits) > 0 {
				wait = (*waits)[0]
			}
			if next[i] = next[i].Add(wait); !next[i].Before(end) {
				continue // sent after the end
			}
			if i == len(next)-1 {
				high++
			} else {
				normal++
			}
		}
		total := normal + high
		if total > seconds*rate+2 { // each bucket's burst of 1
			t.Errorf("%d sends in %d s at %d a second, want at most %d", total, seconds, rate, seconds*rate+2)
		}
		if high < seconds*rate/10 || high > seconds*rate/10+2 {
			t.Errorf("high sends: got %d, want the reserve's tenth, %d (+2)", high, seconds*rate/10)
		}
		if normal < seconds*rate*9/10-2 {
			t.Errorf("normal sends: got %d, want at least nine tenths, %d (-2)", normal, seconds*rate*9/10)
		}
		t.Logf("%d normal and %d high sends in %d s", normal, high, seconds)
	})
}
