package sim

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"log/slog"
	"math/rand/v2"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/delivery"
)

// Options are a run's knobs besides its seed.
type Options struct {
	Nodes int // simulated nodes (default 2 or 3, from the seed)
	// Ops is the number of workload operations (default 30).
	Ops int
	// Postgres, when set, is the URL of a PostgreSQL database to run on
	// (a schema of its own), instead of the embedded store.
	Postgres string
	// Trace, when set, is written each step's key, in order; Steps, when
	// set, counts the steps by call (a profile of a run).
	Trace io.Writer
	Steps map[string]int
	// Log, when set, gets the services' log lines (for replaying a seed).
	Log io.Writer
}

// maxDeaths bounds the node deaths of a run; quietAfter is the wait from
// which the clock jumps, the watches' looks held (see idle).
const (
	maxDeaths = 3
	// rescueEvery is how often River's rescuer looks (its default).
	rescueEvery = 30 * time.Second
	quietAfter  = 5 * time.Second
)

// errDead is what a dead node's calls get: nothing of them reaches the
// store or FCM.
var errDead = errors.New("sim: the node is dead")

// errInjected is an injected store failure that is not an outage.
var errInjected = errors.New("sim: injected store failure")

// actorKey marks a context with the actor (a job run, an API request)
// whose calls it carries.
type actorKey struct{}

func withActor(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, actorKey{}, name)
}

// verdict is the scheduler's answer to a call waiting at a scheduling
// point, drawn from the seed by the scheduler alone.
type verdict struct {
	dieBefore, dieAfter bool
	errBefore, errAfter error
	// answer is FCM's (or the webhook receiver's) answer to a send.
	answer error
}

// waiter is a call waiting at a scheduling point for its turn.
type waiter struct {
	key   string // actor and call: the order of waiters is by key, not arrival
	actor string
	node  *node
	kind  pointKind
	args  []any
	turn  chan verdict
}

type pointKind int

const (
	pointStore pointKind = iota
	pointFCM
	pointAuth
	pointWebhook
	pointAPI
	pointFinish
)

// world is one run: its seed's randomness (the scheduler's alone), the
// store, the nodes, the queue, the workload and what was observed.
type world struct {
	t    testing.TB
	seed uint64
	rng  *rand.Rand
	opt  Options
	env  *env

	mu      sync.Mutex
	waiting []*waiter
	wake    chan struct{}
	quiet   chan struct{} // closed when a quiet stretch ends; nil outside one
	closing bool
	steps   int

	nodes []*node
	mk    *herald.MasterKey
	app   herald.App
	prob  faults
	start time.Time
	// healAt: no fault is injected after it, so the run settles.
	healAt, endAt time.Time
	ops           []op
	nextOp        int
	aliases       map[string]string // push ids by alias (see alias)
	trace         hash.Hash64       // of the steps, in order: equal on replay
	jitterRNG     *rand.Rand        // the retries' backoff jitter, from the seed (jitter)
	rescued       time.Time
	obs           observed
	logger        *slog.Logger

	// lapseBy is when the last push that may wait for approval has
	// lapsed if no one answered it (zero when the workload has none).
	lapseBy time.Time
	// localBy is past the last zone part of a local-time push the
	// workload may make, and a night deferral and retry hour of it
	// (zero when it makes none).
	localBy time.Time
}

// faults are a run's fault rates, drawn from its seed.
type faults struct {
	storeErr, death, fcmFail, authFail, hookFail float64
}

// Run runs the simulation of seed inside a synctest bubble and checks
// the invariants after it; t fails with the command that replays it.
func Run(t *testing.T, seed uint64, opt Options) {
	if opt.Ops <= 0 {
		opt.Ops = 30
	}
	synctest.Test(t, func(t *testing.T) {
		w := &world{t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), opt: opt,
			wake: make(chan struct{}, 1), aliases: map[string]string{}, trace: fnv.New64a(),
			jitterRNG: rand.New(rand.NewPCG(seed^0x5851f42d4c957f2d, seed))}
		w.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		if opt.Log != nil {
			w.logger = slog.New(slog.NewTextHandler(opt.Log, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
		w.run()
	})
}

func (w *world) run() {
	// The bubble's clock starts at 2000-01-01 00:00 UTC; each seed starts
	// at another hour, so runs cross the night window's edges.
	time.Sleep(time.Duration(w.rng.IntN(24))*time.Hour + time.Duration(w.rng.IntN(3600))*time.Second)
	w.start = time.Now()
	if w.opt.Nodes <= 0 {
		w.opt.Nodes = 2 + w.rng.IntN(2)
	}
	w.prob = faults{storeErr: w.rng.Float64() * 0.03, death: w.rng.Float64() * 0.002,
		fcmFail: w.rng.Float64() * 0.3, authFail: w.rng.Float64() * 0.01, hookFail: w.rng.Float64() * 0.3}
	if w.opt.Postgres != "" {
		w.env = openPostgres(w, w.opt.Postgres)
	} else {
		w.env = openEnv(w)
	}
	w.setup()
	w.ops = w.workload()
	last := w.start
	if len(w.ops) > 0 {
		last = w.ops[len(w.ops)-1].at
	}
	w.healAt = last.Add(30 * time.Minute)
	w.endAt = last.Add(20 * time.Hour) // past any morning and retry hour, and the webhook retries (17.6 h)
	if w.lapseBy.After(w.endAt) {
		w.endAt = w.lapseBy // and past the approval window of a push that waits for one
	}
	if w.localBy.After(w.endAt) {
		w.endAt = w.localBy // and past a local-time push's last zone
	}
	// River's periodic job of the daily re-confirmations, every hour
	// (River inserts it every minute; its runs are claimed once a day).
	for at := w.start; at.Before(w.endAt); at = at.Add(time.Hour) {
		w.env.insert(delivery.DailyArgs{}, at)
	}
	for i := range w.opt.Nodes {
		w.nodes = append(w.nodes, w.newNode(i))
	}
	began := time.Now() // the bubble's clock: the time simulated
	w.loop()
	w.close()
	w.check()
	w.t.Logf("seed %d: zone %s, %d nodes, %d ops (%d failed), %d pushes accepted, %d steps (trace %016x), %d sends, %d deaths, %d job errors; %s simulated",
		w.seed, w.app.TimeZone, w.opt.Nodes, len(w.ops), w.obs.opErrors, len(w.obs.accepted), w.steps, w.trace.Sum64(), w.obs.sends, w.obs.deaths, w.obs.jobErrors, time.Since(began))
}

// jitter is every node's Config.Jitter: drawn from the seed, apart from
// the scheduler's draws, so that a retry falls due at the same instant on
// every replay (math/rand's made about one replay in three diverge).
func (w *world) jitter() float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.jitterRNG.Float64()
}

// newNode starts a node: its service on the shared store, and its
// schedule watch.
func (w *world) newNode(i int) *node {
	n := &node{w: w, id: i}
	if i < len(w.nodes) {
		n.inc = w.nodes[i].inc + 1
	}
	n.name = fmt.Sprintf("n%d.%d", i, n.inc)
	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.store = &Store{inner: w.env.store, node: n}
	n.svc = delivery.New(delivery.Config{Store: n.store, Sender: n, Webhooks: n, MasterKey: w.mk,
		Logger: w.logger.With("node", n.name), Now: time.Now, ChunkSize: 3, Concurrency: 2, FanoutPage: 4, Jitter: w.jitter})
	n.stopWatch = n.svc.StartScheduleWatch(n.store)
	return n
}

// loop is the scheduler: whenever every goroutine of the bubble is
// blocked, it picks the next step from the seed among the calls waiting
// at scheduling points and the nodes able to fetch a due job; when there
// is none it lets the clock run to the next thing due.
func (w *world) loop() {
	for {
		synctest.Wait()
		select {
		case <-w.wake:
		default:
		}
		now := time.Now()
		if !now.Before(w.endAt) {
			return
		}
		if now.Sub(w.rescued) >= rescueEvery {
			w.env.rescue(now)
			w.rescued = now
		}
		if w.startOps(now)+w.restartNodes(now) > 0 {
			synctest.Wait()
		}
		w.mu.Lock()
		ws := slices.Clone(w.waiting)
		w.mu.Unlock()
		slices.SortStableFunc(ws, func(a, b *waiter) int { return cmpString(a.key, b.key) })
		for _, n := range w.nodes {
			if n.dying {
				n.die()
			}
		}
		var fetchers []*node
		if w.env.due(now) > 0 {
			w.mu.Lock()
			for _, n := range w.nodes {
				if !n.dead && n.jobs < 4 {
					fetchers = append(fetchers, n)
				}
			}
			w.mu.Unlock()
		}
		if k := len(ws) + len(fetchers); k > 0 {
			w.steps++
			if c := w.rng.IntN(k); c < len(ws) {
				if w.opt.Steps != nil {
					w.opt.Steps[strings.Fields(ws[c].key)[1]]++
				}
				w.trace.Write([]byte(ws[c].key + "\n"))
				if w.opt.Trace != nil {
					fmt.Fprintln(w.opt.Trace, ws[c].key)
				}
				w.grant(ws[c])
			} else {
				w.trace.Write([]byte("fetch " + fetchers[c-len(ws)].name + "\n"))
				if w.opt.Trace != nil {
					fmt.Fprintln(w.opt.Trace, "fetch", fetchers[c-len(ws)].name)
				}
				fetchers[c-len(ws)].fetch(now)
			}
			continue
		}
		w.idle(now)
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// idle lets the clock run to the next thing due: a job, an operation, a
// rescue or a restart, or whatever a goroutine's own timer wakes first. A
// wait longer than quietAfter is a quiet stretch: the watches' looks are
// held meanwhile, so the clock jumps rather than ticking every 2 s.
func (w *world) idle(now time.Time) {
	next := earliest(w.endAt, w.env.nextDue(now), w.nextEvent(now))
	d := next.Sub(now)
	if d <= 0 {
		d = time.Second // due work no node can take now
	}
	if d > quietAfter {
		w.mu.Lock()
		w.quiet = make(chan struct{})
		w.mu.Unlock()
		defer func() {
			w.mu.Lock()
			close(w.quiet)
			w.quiet = nil
			w.mu.Unlock()
		}()
		d -= 3 * time.Second // the watches look before it (watchAhead is 5 s)
	}
	select {
	case <-w.wake:
	case <-time.After(d):
	}
}

// nextEvent is when the next operation starts or a dead node restarts.
func (w *world) nextEvent(now time.Time) time.Time {
	next := w.endAt
	if w.nextOp < len(w.ops) {
		next = earliest(next, w.ops[w.nextOp].at)
	}
	for _, n := range w.nodes {
		if n.dead {
			next = earliest(next, n.restartAt)
		}
	}
	return next
}

// restartNodes starts a new incarnation of each dead node due back, and
// says how many.
func (w *world) restartNodes(now time.Time) int {
	k := 0
	for i, n := range w.nodes {
		if n.dead && !now.Before(n.restartAt) {
			w.nodes[i] = w.newNode(i)
			k++
		}
	}
	return k
}

// alias names a push in the waiters' keys by the order it was accepted
// in, which the schedule fixes: its id has a random part.
func (w *world) alias(s string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if a, ok := w.aliases[s]; ok {
		return a
	}
	return s
}

// nameNew gives the push a call is about to accept its alias.
func (w *world) nameNew(wt *waiter) {
	var id string
	for _, a := range wt.args {
		switch p := a.(type) {
		case herald.Push:
			id = p.ID
		case *herald.Push:
			if p != nil {
				id = p.ID
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.aliases[id]; id != "" && !ok {
		w.aliases[id] = fmt.Sprintf("p%d", len(w.aliases))
	}
}

// grant gives a waiting call its turn, with its verdict from the seed.
func (w *world) grant(wt *waiter) {
	w.nameNew(wt)
	w.mu.Lock()
	w.waiting = slices.DeleteFunc(w.waiting, func(x *waiter) bool { return x == wt })
	w.mu.Unlock()
	v := w.judge(wt)
	if wt.node != nil && v.dieBefore {
		wt.node.die()
		wt.turn <- v
		return
	}
	if wt.node != nil && v.dieAfter {
		// The call runs to its end first (it was granted); the node dies
		// at its next call.
		wt.node.dying = true
	}
	w.observe(wt, v)
	wt.turn <- v
}

// judge draws a call's verdict. Faults stop at healAt, and a node dies
// only while another lives.
func (w *world) judge(wt *waiter) verdict {
	var v verdict
	faulty := time.Now().Before(w.healAt)
	switch wt.kind {
	case pointStore, pointFinish:
		if !faulty || wt.node == nil {
			return v
		}
		switch r := w.rng.Float64(); {
		case r < w.prob.death && w.alive() > 1 && w.obs.deaths < maxDeaths:
			if w.rng.IntN(2) == 0 {
				v.dieBefore = true
			} else {
				v.dieAfter = true
			}
		case r < w.prob.death+w.prob.storeErr:
			err := error(errInjected)
			if w.rng.IntN(2) == 0 {
				err = herald.Unavailable(errors.New("sim: store unavailable"))
			}
			if w.rng.IntN(2) == 0 {
				v.errBefore = err
			} else {
				v.errAfter = err
			}
		}
	case pointFCM:
		v.answer = w.fcmAnswer(faulty)
		if faulty && w.rng.Float64() < w.prob.death && w.alive() > 1 && w.obs.deaths < maxDeaths {
			v.dieAfter = true // the message reached FCM; its answer is lost with the node
		}
	case pointAuth:
		if faulty && w.rng.Float64() < w.prob.authFail {
			v.answer = &herald.SendError{Class: herald.SendRetry, Code: "token endpoint", Err: errors.New("sim: token endpoint unreachable")}
			if w.rng.IntN(4) == 0 {
				v.answer = &herald.SendError{Class: herald.SendAuth, Status: 401, Code: "invalid_grant", Message: "sim: key revoked"}
			}
		}
	case pointWebhook:
		if faulty && w.rng.Float64() < w.prob.hookFail {
			v.answer = errors.New("sim: webhook receiver answered 503")
		}
	case pointAPI:
		if faulty && w.rng.Float64() < w.prob.storeErr {
			v.errBefore = herald.Unavailable(errors.New("sim: store unavailable"))
		}
	}
	return v
}

// fcmAnswer is FCM's answer to one send, as the FCM client classifies it.
func (w *world) fcmAnswer(faulty bool) error {
	if !faulty || w.rng.Float64() >= w.prob.fcmFail {
		return nil
	}
	switch w.rng.IntN(9) {
	case 0:
		return &herald.SendError{Class: herald.SendUnregistered, Status: 404, Code: "UNREGISTERED"}
	case 1:
		return &herald.SendError{Class: herald.SendInvalidToken, Status: 400, Code: "INVALID_ARGUMENT"}
	case 2:
		return &herald.SendError{Class: herald.SendRetry, Status: 429, Code: "QUOTA_EXCEEDED", RetryAfter: time.Duration(1+w.rng.IntN(120)) * time.Second}
	case 3:
		return &herald.SendError{Class: herald.SendRetry, Status: 429, Code: "QUOTA_EXCEEDED", RetryAfter: time.Minute}
	case 4:
		return &herald.SendError{Class: herald.SendRetry, Status: 500, Code: "INTERNAL"}
	case 5:
		return &herald.SendError{Class: herald.SendRetry, Status: 503, Code: "UNAVAILABLE"}
	case 6:
		if w.rng.IntN(8) == 0 { // rare: it fails the whole push
			return &herald.SendError{Class: herald.SendAuth, Status: 401, Code: "UNAUTHENTICATED"}
		}
		return &herald.SendError{Class: herald.SendRetry, Status: 503, Code: "UNAVAILABLE"}
	case 7:
		return &herald.SendError{Class: herald.SendThirdPartyAuth, Status: 401, Code: "THIRD_PARTY_AUTH_ERROR"}
	}
	return &herald.SendError{Class: herald.SendRejected, Status: 400, Code: "INVALID_ARGUMENT", Message: "sim: payload refused"}
}

func (w *world) alive() int {
	n := 0
	for _, x := range w.nodes {
		if !x.dead {
			n++
		}
	}
	return n
}

// close ends the run: every call from now on fails at once, the waiting
// ones are released, the nodes stop.
func (w *world) close() {
	w.mu.Lock()
	w.closing = true
	ws := w.waiting
	w.waiting = nil
	w.mu.Unlock()
	for _, wt := range ws {
		wt.turn <- verdict{dieBefore: true}
	}
	for _, n := range w.nodes {
		n.cancel()
		n.stopWatch()
	}
	synctest.Wait()
}

// wait parks a call at a scheduling point until the scheduler grants it.
func (w *world) wait(ctx context.Context, n *node, kind pointKind, what string, args ...any) verdict {
	actor, _ := ctx.Value(actorKey{}).(string)
	if actor == "" && n != nil {
		// A watch's runs go at once (one per push or deferred chunk):
		// named apart by their work, or waiters of equal keys would be
		// ordered by their arrival, which does not replay.
		actor = n.name + "/watch"
		if work, ok := pprof.Label(ctx, "work"); ok {
			id, chunk, _ := strings.Cut(work, "/")
			actor += "/" + w.alias(id) + "/" + chunk
		}
	}
	wt := &waiter{key: actor + " " + what, actor: actor, node: n, kind: kind, args: args, turn: make(chan verdict, 1)}
	w.mu.Lock()
	if w.closing {
		w.mu.Unlock()
		return verdict{dieBefore: true}
	}
	if q := w.quiet; q != nil && what == "DueWork" {
		w.mu.Unlock()
		<-q // a watch's look in a quiet stretch waits for its end
		return w.wait(ctx, n, kind, what, args...)
	}
	w.waiting = append(w.waiting, wt)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return <-wt.turn
}

func earliest(ts ...time.Time) time.Time {
	e := ts[0]
	for _, t := range ts[1:] {
		if t.Before(e) {
			e = t
		}
	}
	return e
}
