package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heraldpush/herald/client"
)

// The urgent mode (DESIGN section 14 "Priority"): the mode's push is one
// all-users push at the FCM project's quota, the blast alone; then a
// second one to the same devices with a one-user push of another app of
// the same FCM project sent alongside every ProbeEvery (probes, each to a
// user and token of its own), and each probe's time from its request to
// its message at the emulator. Options.ProbePriority says what the
// probes ask for: "high" (the default) or "normal", the figures before
// the high lane.

// Urgent is the urgent mode's second phase.
type Urgent struct {
	// Priority is the probes' options.priority.
	Priority     string  `json:"priority"`
	ProbeEveryMS float64 `json:"probeEveryMs"`
	// IdleMS are the latencies of probes sent before any blast: what one
	// takes with nothing else to send.
	IdleP50MS float64 `json:"idleP50Ms"`
	// Probes were sent while the blast was; Lost never reached the
	// emulator before it ended and a minute after.
	Probes int     `json:"probes"`
	Lost   int     `json:"lost"`
	P50MS  float64 `json:"p50Ms"`
	P99MS  float64 `json:"p99Ms"`
	MaxMS  float64 `json:"maxMs"`
	// BlastPerSecond is the second blast's rate, with the probes beside
	// it; RateRatio that over the first's, alone (Delivery.PerSecond).
	BlastPerSecond float64 `json:"blastPerSecond"`
	RateRatio      float64 `json:"rateRatio"`
}

// Probe figures.
const (
	idleProbes = 5
	// maxProbes bounds the probes of one run (and the probe users it
	// registers): 200 seconds of blast at one every 200 ms.
	maxProbes = 1000
)

// probeToken is probe i's token; its user is "probe-"+i.
func probeToken(i int) string { return "probe-token-" + strconv.Itoa(i) }

// probeClock notes when the emulator took each probe's message (the
// emulator calls seen before answering each valid send) and tells the
// probe waiting for it.
type probeClock struct {
	mu      sync.Mutex
	at      map[string]time.Time
	waiting map[string]chan struct{}
}

func newProbeClock() *probeClock {
	return &probeClock{at: map[string]time.Time{}, waiting: map[string]chan struct{}{}}
}

// seen is the emulator's hook (emulator.Options.BeforeAnswer).
func (c *probeClock) seen(token string) {
	if !strings.HasPrefix(token, "probe-token-") {
		return
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.at[token]; ok {
		return
	}
	c.at[token] = now
	if ch, ok := c.waiting[token]; ok {
		close(ch)
	}
}

// arrived returns a channel closed once the emulator has taken the probe
// of token, and when it did then.
func (c *probeClock) arrived(token string) (<-chan struct{}, func() time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan struct{})
	if _, ok := c.at[token]; ok {
		close(ch)
	} else {
		c.waiting[token] = ch
	}
	return ch, func() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.at[token] }
}

// urgent runs the mode's second phase (see Urgent).
func (r *runner) urgent(ctx context.Context) error {
	codes, err := setUp(ctx, r.srv, r.emu.url, r.opts.SendRatePerMinute, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.opts.Progress, "bench: urgent: registering %d probe users of a second app of the project\n", maxProbes)
	err = forEach(ctx, maxProbes, r.opts.RegisterWorkers, func(ctx context.Context, i int) error {
		_, err := codes.clients[i%len(codes.clients)].RegisterPushToken(ctx, client.RegisterRequest{
			DeviceID: "probe-" + strconv.Itoa(i), Token: probeToken(i), Platform: "android", AppSourceVersion: "1.6.0",
			UserID: "probe-" + strconv.Itoa(i)})
		return err
	})
	if err != nil {
		return fmt.Errorf("bench: urgent: register probes: %w", err)
	}
	u := &Urgent{Priority: r.opts.ProbePriority, ProbeEveryMS: ms(r.opts.ProbeEvery)}
	r.res.Urgent = u
	var idle []time.Duration
	for i := range idleProbes {
		d, err := r.probe(ctx, codes, i, time.Minute)
		if err != nil {
			return err
		}
		idle = append(idle, d)
	}
	slices.Sort(idle)
	u.IdleP50MS = ms(percentile(idle, 0.5))
	before := r.emu.Stats().Accepted
	fmt.Fprintf(r.opts.Progress, "bench: urgent: a second all-users push to %d users, a %s one-user push every %v beside it\n",
		r.opts.Users, r.opts.ProbePriority, r.opts.ProbeEvery)
	start := time.Now()
	if _, err := r.app.clients[0].PushAll(ctx, client.PushAllRequest{Title: benchTitle, Content: benchContent}); err != nil {
		return fmt.Errorf("bench: urgent: blast: %w", err)
	}
	blastDone := make(chan Delivery, 1)
	var blastErr error
	go func() {
		// The blast alone bounds its second run: three times as long.
		deadline := max(deliveryDeadline(r.opts.Users), 3*time.Duration(r.res.Delivery.Seconds*float64(time.Second)))
		d, err := awaitDeliveries(ctx, r.emu.Emulator, before, r.opts.Users, start, deadline, r.opts.Progress)
		blastErr = err
		blastDone <- d
	}()
	lat, lost, d, err := r.probesBeside(ctx, codes, blastDone)
	if err := errors.Join(err, blastErr); err != nil {
		return err
	}
	// The probes' messages count at the emulator too: the blast's own
	// are what it counted less those.
	d.Delivered -= len(lat)
	d.PerSecond = float64(d.Delivered) / d.Seconds
	slices.Sort(lat)
	u.Probes, u.Lost = len(lat)+lost, lost
	u.P50MS, u.P99MS, u.MaxMS = ms(percentile(lat, 0.5)), ms(percentile(lat, 0.99)), ms(percentile(lat, 1))
	u.BlastPerSecond = d.PerSecond
	if r.res.Delivery.PerSecond > 0 {
		u.RateRatio = d.PerSecond / r.res.Delivery.PerSecond
	}
	return nil
}

// probesBeside sends a probe every ProbeEvery until the blast is done
// (blastDone answers its delivery), each in a goroutine of its own, and
// returns the latencies of those that arrived, how many did not, and the
// blast's delivery.
func (r *runner) probesBeside(ctx context.Context, codes benchApp, blastDone <-chan Delivery) ([]time.Duration, int, Delivery, error) {
	var (
		mu   sync.Mutex
		lat  []time.Duration
		lost int
		errs []error
		wg   sync.WaitGroup
	)
	tick := time.NewTicker(r.opts.ProbeEvery)
	defer tick.Stop()
	var d Delivery
	for i := idleProbes; ; i++ {
		select {
		case d = <-blastDone:
			wg.Wait()
			return lat, lost, d, errors.Join(errs...)
		case <-tick.C:
		}
		if i >= maxProbes {
			continue // out of probe users: wait for the blast
		}
		wg.Go(func() {
			took, err := r.probe(ctx, codes, i, time.Minute)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, errProbeLost):
				lost++
			case err != nil:
				errs = append(errs, err)
			default:
				lat = append(lat, took)
			}
		})
	}
}

// errProbeLost is a probe that did not reach the emulator in time.
var errProbeLost = errors.New("bench: urgent: a probe did not reach the emulator")

// probe sends probe i (a one-user push of codes to its own user, at the
// run's probe priority) and waits until the emulator has its message, at
// most wait; it returns the time from its request to its message.
func (r *runner) probe(ctx context.Context, codes benchApp, i int, wait time.Duration) (time.Duration, error) {
	req := client.PushUsersRequest{UserIDs: []any{"probe-" + strconv.Itoa(i)}, Title: "Your code", Content: "123456"}
	if r.opts.ProbePriority != "normal" {
		req.Options = &client.Options{Priority: r.opts.ProbePriority}
	}
	arrived, at := r.probes.arrived(probeToken(i))
	start := time.Now()
	if _, err := codes.clients[i%len(codes.clients)].PushUsers(ctx, req); err != nil {
		return 0, fmt.Errorf("bench: urgent: probe %d: %w", i, err)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-arrived:
		return at().Sub(start), nil
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-timer.C:
	}
	return 0, errProbeLost
}
