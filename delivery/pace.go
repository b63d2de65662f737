package delivery

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldpush/herald"
)

// pacer paces each app's FCM sends to its rate (herald.App.SendRate), all
// the chunk jobs of all its pushes in this process together, with a token
// bucket per app; and the sends of all apps whose service accounts name the
// same FCM project to the project rate (FCM's quota is per project), with
// a bucket per project: a send takes a token of both, so whichever rate is
// lower holds. On several nodes each paces to its share of both rates: the
// rate divided by the nodes alive (see Heartbeat).
//
// A batch of sends reserves its tokens before it is marked in flight, so a
// slot never sits marked while it waits. A bucket holds at most a tenth
// of a second of sends, so that a second's sends are spread over it; a
// reservation waits until at least the smaller of the batch and the bucket
// is at hand, and then takes what is there up to the batch: at a low rate
// the sends go one by one, at a high one in whole batches, so a batch's
// one write is never split for pacing's sake.
//
// High-priority sends (herald.PriorityHigh) never queue behind normal
// reservations. Each bucket has a reserve beside it at a tenth of its
// rate: a high send takes its tokens from the bucket as any send does
// while nothing waits on it (its tokens are not below zero), and else
// from the reserve, waiting on the reserve alone; what it takes of the
// reserve is charged to the bucket too (its tokens go further below
// zero), so that the normal reservations after it wait for it. All sends
// together stay at the rate; while normal work keeps a bucket spoken for,
// high sends take at most the reserve's tenth of it, and normal work
// loses only what they take; alone, high work has the whole rate.
type pacer struct {
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
	nodes atomic.Int64 // the nodes sharing each rate, at least 1
	// projectRate is the sends a minute of one FCM project, all its apps
	// together (HERALD_FCM_PROJECT_RATE).
	projectRate int

	mu       sync.Mutex
	buckets  map[string]*bucket        // by app id, and by projectKey for projects
	projects map[string]accountProject // by app id
}

// accountProject is the project an app's service-account file names, kept
// with the file's digest (not the file, which holds the private key).
type accountProject struct {
	file    [sha256.Size]byte
	project string
}

// newPacer returns a pacer of projectRate sends a minute per FCM project;
// 0 stands for herald.DefaultFCMProjectRate.
func newPacer(projectRate int) *pacer {
	if projectRate <= 0 {
		projectRate = herald.DefaultFCMProjectRate
	}
	p := &pacer{now: time.Now, sleep: sleepCtx, projectRate: projectRate,
		buckets: map[string]*bucket{}, projects: map[string]accountProject{}}
	p.nodes.Store(1)
	return p
}

// projectKey is the bucket key of an FCM project: apart from every app id.
func projectKey(project string) string { return "project " + project }

// reserveKey is the key of the reserve beside the bucket of key (see
// pacer): apart from every app id and project key.
func reserveKey(key string) string { return "reserve " + key }

// reserveShare is the part of a rate kept for high-priority sends.
const reserveShare = 10

// projectOf returns the FCM project_id that an app's service-account file
// names, "" when it names none (the file cannot be read: its sends then
// fail on their own). It is read once per file.
func (p *pacer) projectOf(appID string, serviceAccount []byte) string {
	sum := sha256.Sum256(serviceAccount)
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.projects[appID]; ok && c.file == sum {
		return c.project
	}
	var f struct {
		ProjectID string `json:"project_id"`
	}
	_ = json.Unmarshal(serviceAccount, &f) // unreadable: no project, see above
	p.projects[appID] = accountProject{file: sum, project: f.ProjectID}
	return f.ProjectID
}

// sleepCtx waits for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// bucketFor returns the bucket of key at perMinute a minute, shared by the
// nodes, made or brought to that rate now. p.mu is held.
func (p *pacer) bucketFor(key string, perMinute int, now time.Time) *bucket {
	perSec := float64(perMinute) / 60 / float64(p.nodes.Load())
	b := p.buckets[key]
	if b == nil {
		b = newBucket(perSec, now)
		p.buckets[key] = b
	}
	b.setRate(perSec, now)
	return b
}

// take reserves tokens for up to n sends of app, whose FCM project is
// project ("" for none), and waits until they are due; high sends take
// their tokens as the pacer's doc says. It returns how many it took (1 to
// n), or 0 with the wait that would be needed when that wait would end
// after until (the caller yields and comes back then), or the context's
// error (nothing taken).
func (p *pacer) take(ctx context.Context, app herald.App, project string, n int, until time.Time, high bool) (int, time.Duration, error) {
	p.mu.Lock()
	now := p.now()
	k, wait := p.reserve(app.ID, app.SendRate(), n, now, until, high)
	if k > 0 && project != "" {
		kp, waitp := p.reserve(projectKey(project), p.projectRate, k, now, until, high)
		p.buckets[app.ID].put(k - kp) // the project allows fewer: the rest goes back
		k, wait = kp, max(wait, waitp)
	}
	p.mu.Unlock()
	if k == 0 || wait <= 0 {
		return k, wait, nil
	}
	if err := p.sleep(ctx, wait); err != nil {
		p.giveBack(app.ID, project, k)
		return 0, 0, err
	}
	return k, 0, nil
}

// reserve takes tokens for up to n sends of the bucket of key, at
// perMinute a minute, as bucket.reserve does; a high send's from the
// reserve while sends wait on the bucket (see pacer). p.mu is held.
func (p *pacer) reserve(key string, perMinute, n int, now, until time.Time, high bool) (int, time.Duration) {
	b := p.bucketFor(key, perMinute, now)
	if !high || b.tokens >= 0 { // bucketFor brought it up to date
		return b.reserve(n, now, until)
	}
	k, wait := p.bucketFor(reserveKey(key), max(1, perMinute/reserveShare), now).reserve(n, now, until)
	b.tokens -= float64(k)
	return k, wait
}

// giveBack returns k tokens of app and its project that were taken and
// not spent (sends judged unnecessary, or a wait cut short). A high
// send's taken from a reserve go back to the bucket it was charged to.
func (p *pacer) giveBack(appID, project string, k int) {
	if k <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := []string{appID}
	if project != "" {
		keys = append(keys, projectKey(project))
	}
	for _, key := range keys {
		if b := p.buckets[key]; b != nil {
			b.put(k)
		}
	}
}

// bucket is one app's or one project's token bucket. tokens goes below
// zero when sends are reserved ahead: each reservation waits until the
// tokens it took would have come in, so reservations are served in the
// order made.
type bucket struct {
	perSec, burst, tokens float64
	at                    time.Time // when tokens was last brought up to date
}

func newBucket(perSec float64, now time.Time) *bucket {
	b := &bucket{perSec: perSec, burst: burstOf(perSec), at: now}
	b.tokens = b.burst
	return b
}

// burstOf is the bucket's size at a rate: a tenth of a second of sends,
// at least one.
func burstOf(perSec float64) float64 { return max(1, perSec/10) }

// refill adds the tokens that came in since the last update.
func (b *bucket) refill(now time.Time) {
	if now.After(b.at) {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.at).Seconds()*b.perSec)
		b.at = now
	}
}

// setRate changes the rate from now on; the tokens that came in so far
// came at the old rate.
func (b *bucket) setRate(perSec float64, now time.Time) {
	b.refill(now)
	if perSec != b.perSec {
		b.perSec, b.burst = perSec, burstOf(perSec)
		b.tokens = min(b.tokens, b.burst)
	}
}

// reserve takes tokens for up to n sends: at once what is at hand when
// that is at least the smaller of n and the bucket's size, else that much
// ahead, with the wait until it is due. It takes nothing, answering the
// wait, when the wait would end after until.
func (b *bucket) reserve(n int, now, until time.Time) (int, time.Duration) {
	b.refill(now)
	want := min(n, int(b.burst))
	if b.tokens >= float64(want) {
		k := min(n, int(b.tokens))
		b.tokens -= float64(k)
		return k, 0
	}
	wait := time.Duration((float64(want) - b.tokens) / b.perSec * float64(time.Second))
	if now.Add(wait).After(until) {
		return 0, wait
	}
	b.tokens -= float64(want)
	return want, wait
}

// put returns k unspent tokens.
func (b *bucket) put(k int) { b.tokens = min(b.burst, b.tokens+float64(k)) }

// paced takes tokens for up to n of the chunk's sends (see pacer.take),
// waiting until they are due, at most until the run's yield time. It
// returns how many sends may go; 0 when none may now, with res saying
// why (the context ended, or when to come back).
func (c *chunk) paced(ctx context.Context, n int, res *chunkResult) int {
	project := c.s.pace.projectOf(c.app.ID, c.serviceAccount)
	k, wait, err := c.s.pace.take(ctx, c.app, project, n, c.yieldAt, c.push.High())
	switch {
	case err != nil:
		res.err = err
	case k == 0:
		res.comeBack(wait)
	}
	return k
}

// unpaced gives back the tokens of k sends taken and not made.
func (c *chunk) unpaced(k int) {
	c.s.pace.giveBack(c.app.ID, c.s.pace.projectOf(c.app.ID, c.serviceAccount), k)
}

// Node heartbeat: each node notes itself every heartbeatEvery; a node not
// seen for nodeLiveFor no longer counts, and one not seen for nodeDeadAfter
// is dead: a live node forgets it and releases the jobs it was running, so
// that its work goes on within nodeDeadAfter + heartbeatEvery (and a
// fetch) of its last beat instead of River's RescueAfter.
const (
	heartbeatEvery = 3 * time.Second
	nodeLiveFor    = 15 * time.Second
	nodeDeadAfter  = 9 * time.Second
)

// StartHeartbeat has this process note itself alive in the store as node,
// now and every 3 seconds, and pace each app and each FCM project to its
// rate divided by the nodes seen in the last 15 seconds, so that nodes
// sharing a database together send at about the app's (and the project's)
// rate. For a database several `herald serve` processes share
// (PostgreSQL); with one node it changes nothing.
// The function it returns stops the heartbeat and removes the node, so
// that the others take up its share at their next beat.
func (s *Service) StartHeartbeat(nodes herald.NodeStore, node string) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		var run beatRun
		for {
			s.beat(ctx, nodes, node, &run)
			select {
			case <-ctx.Done():
				leave, cancelLeave := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancelLeave()
				if err := nodes.LeaveNodes(leave, node); err != nil {
					s.cfg.Logger.Warn("removing this node from the nodes table", "node", node, "err", err)
				}
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// beatRun is a node's unbroken run of beats: since when each has been
// written.
type beatRun struct {
	since time.Time
	ok    bool
}

// beat notes the node alive and takes in how many nodes are; a failed
// write keeps the last count. A node that has beaten without a break for
// nodeDeadAfter then releases the nodes silent for as long: it judges
// another dead only when the database took its own beats all that time,
// so after an outage, when every node's beat is stale, none is judged
// dead until the live ones have had time to beat again.
func (s *Service) beat(ctx context.Context, nodes herald.NodeStore, node string, run *beatRun) {
	now := s.pace.now()
	n, err := nodes.Heartbeat(ctx, node, now, now.Add(-nodeLiveFor))
	if err != nil {
		run.ok = false
		if ctx.Err() == nil {
			s.cfg.Logger.Warn("node heartbeat", "node", node, "err", err)
		}
		return
	}
	if !run.ok {
		run.since, run.ok = now, true
	}
	if old := s.pace.nodes.Swap(int64(max(1, n))); old != int64(max(1, n)) {
		s.cfg.Logger.Info("nodes sharing the send rates", "nodes", max(1, n))
	}
	if now.Sub(run.since) < nodeDeadAfter {
		return
	}
	dead, jobs, err := nodes.ReleaseDeadNodes(ctx, now.Add(-nodeDeadAfter), now)
	switch {
	case err != nil && ctx.Err() == nil:
		s.cfg.Logger.Warn("releasing the jobs of nodes that stopped beating", "node", node, "err", err)
	case len(dead) > 0:
		s.cfg.Logger.Warn("nodes stopped beating: their jobs released to the live nodes", "node", node,
			"dead", dead, "jobs", jobs)
	}
}
