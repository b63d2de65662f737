// Package bench is the harness behind `herald bench` (DESIGN section 10):
// it starts an FCM emulator and a Herald server on loopback, registers users
// through the SDK API, pushes to all of them through the Server API (in
// 500-user requests, 200-message requests, one all-users push, one segment
// push over the users' tags or one push of templates in three languages:
// Mode), waits until the emulator has every message, and compares the end-to-end
// rate with what a bare HTTP/2 client gets from the same emulator.
//
// The server runs as one or more `herald serve` processes (StartNodes),
// whose own CPU time and peak RSS are measured apart from the bench
// process's (the emulator and the client), or inside the bench process
// (the caller passes a function that starts it: it lives in package main).
// The harness itself depends only on the public API, the admin API and the
// emulator.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/heraldpush/herald"
)

// Server is a running Herald server the harness talks to.
type Server struct {
	PublicURL  string
	AdminURL   string
	AdminToken string
	// Engine names the store: "sqlite" or "postgres".
	Engine string
	// PublicURLs are the public listeners of every node when the server
	// is several processes: registrations and push requests go to each
	// in turn. Empty means PublicURL alone.
	PublicURLs []string
	// Processes, when not nil, reads the usage of each server process;
	// nil means the server runs inside the bench process.
	Processes func() ([]ProcessUsage, error)
	// DatabaseURL, when not empty, is the PostgreSQL database the server
	// runs on: its WAL and, on this machine, its processes' CPU are
	// measured too (Result.Database).
	DatabaseURL string
	// Stop shuts the server down and removes its data.
	Stop func() error
}

// nodes returns the public URLs requests are spread over.
func (s Server) nodes() []string {
	if len(s.PublicURLs) == 0 {
		return []string{s.PublicURL}
	}
	return s.PublicURLs
}

// Options configures a run. Zero fields take the defaults.
type Options struct {
	// Users is the number of users registered and pushed to (default 100000).
	Users int
	// Mode is how the users are pushed to (default ModeUsers).
	Mode Mode
	// SendRatePerMinute is the bench app's send rate (default
	// herald.MaxSendRatePerMinute, so that the run measures Herald and not
	// the pacing to FCM's quota, an app's default of 10,000 a second).
	SendRatePerMinute int
	// Latency is the emulator's added delay per send.
	Latency time.Duration
	// Streams is the number of concurrent sends of the ceiling client
	// (default 500: the server's 50 per chunk × 10 workers).
	Streams int
	// RegisterWorkers is the number of concurrent SDK registrations (default 32).
	RegisterWorkers int
	// PushWorkers is the number of concurrent Server API push requests
	// (default 8).
	PushWorkers int
	// Events adds the events phase after delivery (see Events): every
	// device reports received, and a fraction OpenRate (0 to 1) opened
	// too, with EventWorkers concurrent requests (default 64).
	Events       bool
	OpenRate     float64
	EventWorkers int
	// ProbeEvery is how often the urgent mode sends a probe beside its
	// blast (default 200 ms); ProbePriority the probes' options.priority,
	// "high" (the default) or "normal".
	ProbeEvery    time.Duration
	ProbePriority string
	// WebhookEvents turns every webhook event type on for the bench app,
	// its webhook a receiver in the bench process: the delivery phase
	// then ends once the receiver has every push.sent event too, so that
	// its CPU covers writing and sending them.
	WebhookEvents bool
	// Marketing marks the mode's pushes marketing (options.isMarketing;
	// the bench app's users consent to marketing at any hour, and its
	// (광고) check is off), so that they go through the consent judgment
	// at send time and, with MarketingCap, the frequency cap: its perDay
	// (0: the app has no cap).
	Marketing    bool
	MarketingCap int
	// StartServer starts a server on loopback whose FCM endpoint is
	// fcmEndpoint, with any token_uri allowed.
	StartServer func(ctx context.Context, fcmEndpoint string) (Server, error)
	// Progress, when not nil, gets a line per phase and delivery progress.
	Progress io.Writer
	// CPUProfile, when not nil, gets a CPU profile of the push and delivery
	// phase.
	CPUProfile io.Writer
}

func (o *Options) defaults() error {
	if o.Users == 0 {
		o.Users = 100000
	}
	if o.Mode == "" {
		o.Mode = ModeUsers
	}
	if o.SendRatePerMinute == 0 {
		o.SendRatePerMinute = herald.MaxSendRatePerMinute
	}
	if o.Streams == 0 {
		o.Streams = 500
	}
	if o.RegisterWorkers == 0 {
		o.RegisterWorkers = 32
	}
	if o.PushWorkers == 0 {
		o.PushWorkers = 8
	}
	if o.EventWorkers == 0 {
		o.EventWorkers = 64
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.ProbeEvery == 0 {
		o.ProbeEvery = 200 * time.Millisecond
	}
	if o.ProbePriority == "" {
		o.ProbePriority = string(herald.PriorityHigh)
	}
	switch {
	case o.Users < 1:
		return errors.New("bench: users must be at least 1")
	case o.Streams < 1 || o.RegisterWorkers < 1 || o.PushWorkers < 1 || o.EventWorkers < 1:
		return errors.New("bench: concurrency must be at least 1")
	case o.Latency < 0:
		return errors.New("bench: latency must not be negative")
	case o.Events && !(o.OpenRate >= 0 && o.OpenRate <= 1):
		return errors.New("bench: open rate must be from 0 to 1")
	case o.StartServer == nil:
		return errors.New("bench: no StartServer")
	case o.ProbeEvery < 0:
		return errors.New("bench: probe interval must not be negative")
	case o.ProbePriority != string(herald.PriorityHigh) && o.ProbePriority != string(herald.PriorityNormal):
		return errors.New(`bench: probe priority must be "high" or "normal"`)
	}
	_, err := ParseMode(string(o.Mode))
	return err
}

// deliveryDeadline bounds the wait for every message: a minute, or 2 ms per
// user for large runs.
func deliveryDeadline(users int) time.Duration {
	return max(time.Minute, time.Duration(users)*time.Second/500)
}

// Run performs the benchmark. When the messages do not all arrive in time it
// returns the partial result with the error, so the caller can show what was
// measured.
func Run(ctx context.Context, opts Options) (Result, error) {
	if err := opts.defaults(); err != nil {
		return Result{}, err
	}
	res := Result{
		Users: opts.Users, Mode: string(opts.Mode), EmulatorLatencyMS: ms(opts.Latency),
		GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(), ServerProcess: InProcess,
	}
	probes := newProbeClock()
	emu, err := startEmulator(opts.Latency, probes.seen)
	if err != nil {
		return res, err
	}
	defer emu.stop()
	srv, err := opts.StartServer(ctx, emu.url)
	if err != nil {
		return res, fmt.Errorf("bench: start server: %w", err)
	}
	stopServer := onceErr(srv.Stop)
	defer stopServer()

	res.Engine = srv.Engine
	if srv.Processes != nil {
		res.Nodes, res.ServerProcess = len(srv.nodes()), Separate
	}
	run := &runner{opts: opts, emu: emu, srv: srv, res: &res, probes: probes}
	if srv.DatabaseURL != "" {
		if run.db, err = openDBMeter(ctx, srv.DatabaseURL); err != nil {
			return res, err
		}
		defer run.db.close()
		res.Database = &Database{Scope: run.db.scope()}
	}
	if err := run.serverPhase(ctx); err != nil {
		return res, err
	}
	// The ceiling is the emulator's alone: the server is stopped first so
	// that its leftover work (commits, finish jobs) does not compete.
	if err := stopServer(); err != nil {
		return res, fmt.Errorf("bench: stop server: %w", err)
	}
	fmt.Fprintf(opts.Progress, "bench: ceiling: %d messages straight to the emulator, %d streams\n", opts.Users, opts.Streams)
	c, err := runCeiling(ctx, emu, run.app.account, run.template, opts.Users, opts.Streams)
	res.Ceiling = c
	if err != nil {
		return res, err
	}
	if c.PerSecond > 0 {
		res.Ratio = res.Delivery.PerSecond / c.PerSecond
	}
	return res, nil
}

// runner holds one run's state between phases.
type runner struct {
	opts     Options
	emu      *emulatorServer
	srv      Server
	res      *Result
	app      benchApp
	template []byte // the message the server sent to user 0
	// db measures PostgreSQL when the server runs on it; nil otherwise.
	db *dbMeter
	// probes notes the urgent mode's probes at the emulator.
	probes *probeClock
	// hooks receives the delivery events (Options.WebhookEvents); nil
	// otherwise.
	hooks *receiver
}

// serverPhase sets up the app, registers the users, pushes to them and
// waits for the emulator to have every message.
func (r *runner) serverPhase(ctx context.Context) error {
	app, err := setUp(ctx, r.srv, r.emu.url, r.opts.SendRatePerMinute, r.opts.appSettings())
	if err != nil {
		return err
	}
	r.app, r.res.SendRatePerMinute = app, app.sendRate
	if r.opts.WebhookEvents {
		r.hooks = startReceiver()
		defer r.hooks.srv.Close()
		if err := r.hooks.subscribe(ctx, r.srv, app.id); err != nil {
			return err
		}
		r.res.WebhookEvents = true
	}
	fmt.Fprintf(r.opts.Progress, "bench: registering %d users (%d workers)\n", r.opts.Users, r.opts.RegisterWorkers)
	var reg Register
	server, _ := r.meters()
	if err := server.begin(); err != nil {
		return fmt.Errorf("bench: read usage: %w", err)
	}
	err = r.measureDB(ctx, r.opts.Users, func(p DatabasePhase) { r.res.Database.Register = p }, func() error {
		reg, err = register(ctx, app.clients, r.opts.Users, r.opts.RegisterWorkers)
		return err
	})
	if err != nil {
		r.res.Register = reg
		return err
	}
	u, err := server.finish(0)
	if err != nil {
		return fmt.Errorf("bench: read usage: %w", err)
	}
	reg.ServerCPUSeconds, reg.ServerCPUSecondsPer1000 = u.CPUSeconds, u.CPUSeconds*1000/float64(r.opts.Users)
	r.res.Register = reg
	if r.opts.Mode.tagged() {
		fmt.Fprintf(r.opts.Progress, "bench: importing %d users' tags (one CSV file)\n", r.opts.Users)
		tags, err := importTags(ctx, r.srv, app.id, r.opts.Users)
		r.res.Tags = &tags
		if err != nil {
			return err
		}
	}
	err = r.measureDB(ctx, r.opts.Users, func(p DatabasePhase) { r.res.Database.Deliver = p }, func() error { return r.deliver(ctx) })
	if err != nil {
		return err
	}
	if err := checkDeliveries(r.emu.Emulator, r.opts.Mode, r.opts.Users, &r.res.Delivery); err != nil {
		return err
	}
	msgs := r.emu.Messages(tokenOf(0))
	if len(msgs) == 0 {
		return errors.New("bench: the emulator has no message for user 0")
	}
	r.template = msgs[0].Message
	if r.opts.Mode.tagged() {
		if err := r.baseline(ctx); err != nil {
			return err
		}
	}
	if r.opts.Mode == ModeUrgent {
		if err := r.urgent(ctx); err != nil {
			return err
		}
	}
	if !r.opts.Events {
		return nil
	}
	var ev Events
	return r.measureDB(ctx, 0, func(p DatabasePhase) { r.res.Database.Events = &p }, func() error {
		ev, err = r.reportEvents(ctx)
		r.res.Events = &ev
		return err
	})
}

// measureDB runs a phase of units (0: the events it reports) and, when
// the server runs on PostgreSQL, records the database's work over it with
// record: a VACUUM of the run's tables ends it, so that what PostgreSQL
// leaves to autovacuum (pruning, an index's deferred work) counts in the
// phase that left it.
func (r *runner) measureDB(ctx context.Context, units int, record func(DatabasePhase), phase func() error) error {
	if r.db == nil {
		return phase()
	}
	from, err := r.db.read(ctx)
	if err != nil {
		return err
	}
	if err := phase(); err != nil {
		return err
	}
	if err := r.db.vacuum(ctx); err != nil {
		return err
	}
	to, err := r.db.read(ctx)
	if err != nil {
		return err
	}
	if units == 0 && r.res.Events != nil {
		units = r.res.Events.Events
	}
	record(r.db.phase(ctx, from, to, units))
	return nil
}

// deliver pushes to every user and waits for the emulator to accept every
// message, under the CPU profile when one is asked for, and measures the
// CPU time and peak RSS of the server and of the bench process.
func (r *runner) deliver(ctx context.Context) error {
	if r.opts.CPUProfile != nil {
		stop, err := startCPUProfile(r.opts.CPUProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	server, self := r.meters()
	begin := server.begin()
	if self != server {
		begin = errors.Join(begin, self.begin())
	}
	if err := begin; err != nil {
		return fmt.Errorf("bench: read usage: %w", err)
	}
	requests := r.opts.Mode.requests(r.opts.Users)
	fmt.Fprintf(r.opts.Progress, "bench: pushing to %d users in %d request(s) to %s (%d workers, %d nodes)\n",
		r.opts.Users, requests, r.opts.Mode.Endpoint(), min(requests, r.opts.PushWorkers), len(r.app.clients))
	acc, start, err := pushAll(ctx, r.opts.Mode, r.app.clients, r.opts.Users, r.opts.PushWorkers, r.opts.pushOptions())
	r.res.Accept = acc
	if err != nil {
		return err
	}
	d, err := awaitDeliveries(ctx, r.emu.Emulator, 0, r.opts.Users, start, deliveryDeadline(r.opts.Users), r.opts.Progress)
	r.res.Delivery = d
	if err == nil && r.hooks != nil {
		err = r.hooks.await(ctx, r.opts.Users, deliveryDeadline(r.opts.Users))
	}
	if uerr := r.measure(server, self); uerr != nil {
		return errors.Join(err, uerr)
	}
	return err
}

// baseline sends, after the mode's push, one plain all-users push to the
// same devices and records its rate and server CPU beside the mode's
// (Result.Baseline): what a segment or template push costs over the push
// it refines, in the same run. The mode's push goes first, so that
// whatever warms with use favours the baseline.
func (r *runner) baseline(ctx context.Context) error {
	server, _ := r.meters()
	if err := server.begin(); err != nil {
		return fmt.Errorf("bench: read usage: %w", err)
	}
	fmt.Fprintf(r.opts.Progress, "bench: baseline: one plain all-users push to the same %d users\n", r.opts.Users)
	acc, start, err := pushAll(ctx, ModeAll, r.app.clients, r.opts.Users, 1, r.opts.pushOptions())
	if err != nil {
		return err
	}
	d, err := awaitDeliveries(ctx, r.emu.Emulator, r.opts.Users, r.opts.Users, start, deliveryDeadline(r.opts.Users), r.opts.Progress)
	b := &Baseline{Endpoint: acc.Endpoint, AcceptMS: acc.MaxMS, Delivered: d.Delivered, Seconds: d.Seconds, PerSecond: d.PerSecond}
	r.res.Baseline = b
	u, uerr := server.finish(d.Delivered)
	if err := errors.Join(err, uerr); err != nil {
		return err
	}
	b.ServerCPUSecondsPer1000 = u.CPUSecondsPer1000Deliveries
	if b.PerSecond > 0 {
		b.RateRatio = r.res.Delivery.PerSecond / b.PerSecond
	}
	if b.ServerCPUSecondsPer1000 > 0 {
		b.CPURatio = r.res.Server.CPUSecondsPer1000Deliveries / b.ServerCPUSecondsPer1000
	}
	return checkBaseline(r.emu.Emulator, r.opts.Users)
}

// meters returns the meters of the server's processes and of this one; in
// process, both are this process, one meter, so that the two usages are
// one reading and equal.
func (r *runner) meters() (server, self *usageMeter) {
	if r.srv.Processes == nil {
		m := &usageMeter{scope: rssScope, read: readSelf}
		return m, m
	}
	return &usageMeter{scope: nodesScope, read: r.srv.Processes}, &usageMeter{scope: benchScope, read: readSelf}
}

// measure records the usage of the delivery phase.
func (r *runner) measure(server, self *usageMeter) error {
	su, serr := server.finish(r.res.Delivery.Delivered)
	bu, berr := su, error(nil)
	if self != server {
		bu, berr = self.finish(r.res.Delivery.Delivered)
	}
	r.res.Server, r.res.BenchProcess = su, bu
	r.res.PeakRSSBytes, r.res.PeakRSSScope = su.PeakRSSBytes, su.Scope
	if err := errors.Join(serr, berr); err != nil {
		return fmt.Errorf("bench: read usage: %w", err)
	}
	return nil
}

// onceErr wraps f so that only its first call runs; later calls return nil.
func onceErr(f func() error) func() error {
	done := false
	return func() error {
		if done || f == nil {
			return nil
		}
		done = true
		return f()
	}
}

// ms converts d to milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
