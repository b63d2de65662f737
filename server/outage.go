package server

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldpush/herald"
)

// outageProbeEvery is how often the store is probed while it is down, to
// log the end of the outage.
const outageProbeEvery = time.Second

// outageEcho is how long after an outage River's errors are still taken
// for its echoes (a listener reconnecting on a connection the outage
// broke) and held back.
const outageEcho = 5 * time.Second

// outage logs a store outage once when it starts and once when it ends,
// instead of a line for every request, job and poll that meets it (one
// 15-second outage used to print about 110 error lines a node, 76 of them
// River's "Error fetching jobs").
//
// An outage starts when the store's readiness probe fails after a store
// call failed as unavailable (or River logged an error, or /readyz found
// the store unready); it ends when the probe passes again, which a
// watcher checks every second while the store is down. Meanwhile the
// lines that only repeat it are held back and counted in the end line.
type outage struct {
	log   *slog.Logger // unfiltered: the start and end lines
	probe func(context.Context) error

	mu       sync.Mutex
	down     bool
	since    time.Time
	failures int // store calls failed as unavailable during the outage
	held     int // log lines held back during the outage
	ended    time.Time
	echoFor  time.Duration // outageEcho; tests shorten it
	closed   bool

	probing atomic.Bool // a background probe is running (suspect)
	stop    chan struct{}
	wg      sync.WaitGroup
}

func newOutage(log *slog.Logger, probe func(context.Context) error) *outage {
	return &outage{log: log, probe: probe, stop: make(chan struct{}), echoFor: outageEcho}
}

// suspect is told of a store call that failed as unavailable
// (sqlstore.Store.OnUnavailable): it is counted, and the store probed in
// the background (one probe at a time), so the request is not held.
func (o *outage) suspect(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.failures++
	if !o.closed && o.probing.CompareAndSwap(false, true) { // under mu: never after close's Wait began
		o.wg.Go(func() {
			defer o.probing.Store(false)
			o.check(err)
		})
	}
}

// check probes the store and reports whether it is down, logging the
// start or the end of an outage when the answer changes; cause is what
// made the caller suspect one (the probe's own error when nil).
func (o *outage) check(cause error) bool {
	return o.observe(o.probe(context.Background()), cause)
}

// observe takes a readiness probe's answer (nil: ready), as check or
// /readyz got it.
func (o *outage) observe(probeErr, cause error) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case probeErr != nil && !o.down:
		o.down, o.since, o.held = true, time.Now(), 0
		if cause == nil {
			cause = probeErr
		}
		o.log.Error("database unavailable",
			"reason", reason(probeErr), "err", cause)
		if !o.closed {
			o.wg.Go(o.watch)
		}
	case probeErr == nil && o.down:
		o.log.Info("database available again", "after", time.Since(o.since).Round(time.Millisecond),
			"failedCalls", o.failures, "heldLines", o.held)
		o.down, o.failures, o.ended = false, 0, time.Now()
	case probeErr == nil:
		o.failures = 0 // a transient failure the probe did not confirm
	}
	return o.down
}

// reason is a probe error's short reason (sqlstore.Unready's), or its text.
func reason(err error) string {
	if u, ok := errors.AsType[interface {
		error
		Reason() string
	}](err); ok {
		return u.Reason()
	}
	return err.Error()
}

// watch probes the store every second while it is down.
func (o *outage) watch() {
	t := time.NewTicker(outageProbeEvery)
	defer t.Stop()
	for {
		select {
		case <-o.stop:
			return
		case <-t.C:
			if !o.check(nil) {
				return
			}
		}
	}
}

// isDown reports an outage in progress.
func (o *outage) isDown() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.down
}

// hold counts a log line held back; it reports false (the line is
// written) when no outage is in progress.
func (o *outage) hold() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.down {
		o.held++
	}
	return o.down
}

// echo reports whether an outage ended moments ago (see outageEcho).
func (o *outage) echo() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.ended.IsZero() && time.Since(o.ended) < o.echoFor
}

// close stops the watcher and waits for background probes.
func (o *outage) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	close(o.stop)
	o.wg.Wait()
}

// quiet returns h with the lines an outage repeats held back: written at
// DEBUG (so nothing is lost to an operator who asks for it) instead of
// their level. river marks River's logger, whose errors carry their cause
// as text only: while the store is down, and for outageEcho after, each of
// its warnings and errors is held; when it is up an error makes the store
// probed first (River's fetch loop fails every poll while the database is
// gone). Other lines are held when an error among their attributes is
// herald.ErrUnavailable and the probe confirms it.
func (o *outage) quiet(h slog.Handler, river bool) slog.Handler {
	return quietHandler{h: h, o: o, river: river}
}

type quietHandler struct {
	h     slog.Handler
	o     *outage
	river bool
}

func (q quietHandler) Enabled(ctx context.Context, l slog.Level) bool { return q.h.Enabled(ctx, l) }

func (q quietHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn && q.repeats(r) {
		if !q.h.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r.Level = slog.LevelDebug
	}
	return q.h.Handle(ctx, r)
}

// repeats reports whether r only repeats an outage in progress (or one
// it makes the probe find).
func (q quietHandler) repeats(r slog.Record) bool {
	if q.river {
		if q.o.hold() || q.o.echo() {
			return true
		}
		return r.Level >= slog.LevelError && q.o.check(errors.New(r.Message+": "+attrText(r, "err", "error"))) && q.o.hold()
	}
	var cause error
	r.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Any().(error); ok && errors.Is(err, herald.ErrUnavailable) {
			cause = err
			return false
		}
		return true
	})
	if cause == nil {
		return false
	}
	return q.o.hold() || q.o.check(cause) && q.o.hold()
}

// attrText is the text of the first of r's attributes named one of keys.
func attrText(r slog.Record, keys ...string) string {
	var s string
	r.Attrs(func(a slog.Attr) bool {
		for _, k := range keys {
			if a.Key == k {
				s = a.Value.String()
				return false
			}
		}
		return true
	})
	return s
}

func (q quietHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return quietHandler{h: q.h.WithAttrs(attrs), o: q.o, river: q.river}
}

func (q quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{h: q.h.WithGroup(name), o: q.o, river: q.river}
}
