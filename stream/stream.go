// Package stream sends each app's delivery events (push.sent,
// push.failed, push.received, push.opened; DESIGN section 15) to its
// webhook, from the queue the store keeps of them: the writes that record
// the outcomes and reports queue their events, and this package only
// reads and removes them, so a slow or dead receiver never slows sending.
//
// The words it uses:
//
//   - An app's stream is its queue of events, in id order, and the lease
//     that gives it one dispatcher across the nodes sharing the database
//     (herald.EventStreamStore.ClaimStream): a node sends an app's
//     events only while it holds the lease, one message at a time, so
//     events go out in order, and a device's in the order they happened.
//   - A batch is the app's first events, at most
//     herald.MaxEventsPerMessage: it goes out as one push.events message
//     once it is full or its oldest was queued herald.EventsBatchAge ago.
//     Its webhook-id is a digest of its events' ids, each event's id is
//     its queue id: both the same when the batch is sent again.
//   - A failed message (anything but a 2xx answer) is tried again after
//     herald.EventsRetry of the stream's failures in a row, at most
//     herald.EventsRetryCap; nothing is dropped (events left queued
//     herald.EventsKeptFor are pruned by retention).
package stream

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/webhook"
)

// Defaults of Config.
const (
	// Every is how often a node looks at the streams (real time).
	Every = 100 * time.Millisecond
	// Lease is how long a claim holds an app's stream: longer than one
	// message's attempt (the webhook's 10 s timeout), so a holder that
	// died is replaced within it.
	Lease = 30 * time.Second
	// Runs bounds the apps one node sends at once.
	Runs = 8
)

// Poster posts one signed webhook message (webhook.Sender.Send).
type Poster interface {
	Send(ctx context.Context, url, secret, msgID string, body []byte) error
}

// Apps reads an app (its webhook and list).
type Apps interface {
	App(ctx context.Context, id string) (herald.App, error)
}

// Config is a dispatcher's dependencies.
type Config struct {
	Store     herald.EventStreamStore
	Apps      Apps
	Webhooks  Poster
	MasterKey *herald.MasterKey
	// Holder names this node in the leases.
	Holder string
	// Now is the clock the rules run on: batch age, backoff, leases.
	Now    func() time.Time
	Logger *slog.Logger
	// Every is the look's period (Every when zero).
	Every time.Duration
}

// Dispatcher sends the streams of every app to their webhooks.
type Dispatcher struct {
	cfg Config
	mu  sync.Mutex
	// busy holds the apps this node is sending now; retryAt when each
	// app's stream may be tried again, as this node last learnt it.
	busy    map[string]bool
	retryAt map[string]time.Time
	runs    chan struct{}
}

// New returns a dispatcher with cfg's defaults filled in.
func New(cfg Config) *Dispatcher {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Every <= 0 {
		cfg.Every = Every
	}
	return &Dispatcher{cfg: cfg, busy: map[string]bool{}, retryAt: map[string]time.Time{}, runs: make(chan struct{}, Runs)}
}

// Start runs the dispatcher until the function it returns is called,
// which waits for the messages in flight.
func (d *Dispatcher) Start() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(d.cfg.Every)
		defer t.Stop()
		for {
			d.look(ctx, &wg)
			select {
			case <-ctx.Done():
				wg.Wait()
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// look starts a run for each app with a stream that this node is not
// sending already, as long as there is room.
func (d *Dispatcher) look(ctx context.Context, wg *sync.WaitGroup) {
	apps, err := d.cfg.Store.StreamApps(ctx)
	if err != nil {
		if ctx.Err() == nil {
			d.cfg.Logger.Warn("delivery events: listing the streams", "err", err)
		}
		return
	}
	for _, id := range apps {
		d.mu.Lock()
		busy := d.busy[id]
		d.mu.Unlock()
		if busy {
			continue
		}
		select {
		case d.runs <- struct{}{}:
		default:
			return // full: the next look goes on
		}
		d.mu.Lock()
		d.busy[id] = true
		d.mu.Unlock()
		wg.Add(1)
		go func() {
			defer func() {
				d.mu.Lock()
				delete(d.busy, id)
				d.mu.Unlock()
				<-d.runs
				wg.Done()
			}()
			if err := d.Run(ctx, id); err != nil && ctx.Err() == nil {
				d.cfg.Logger.Warn("delivery events: sending", "app", id, "err", err)
			}
		}()
	}
}

// Run sends the app's due batches, one after the other, while this node
// holds its stream: until none is due, a message fails, or ctx ends.
func (d *Dispatcher) Run(ctx context.Context, appID string) error {
	for ctx.Err() == nil {
		sent, err := d.once(ctx, appID)
		if err != nil || !sent {
			return err
		}
	}
	return nil
}

// once sends the app's batch when one is due, claiming its stream first;
// sent reports a batch sent (another may be due at once). The queue's
// head is read before the claim, which writes, so that a stream with
// nothing due costs a read or two a look (never the batch), and one
// waiting for its retry nothing until then.
func (d *Dispatcher) once(ctx context.Context, appID string) (sent bool, err error) {
	now := d.cfg.Now()
	d.mu.Lock()
	wait := d.retryAt[appID]
	d.mu.Unlock()
	if now.Before(wait) {
		return false, nil
	}
	if due, err := d.cfg.Store.QueueHead(ctx, appID, now); err != nil || !due {
		return false, err
	}
	st, held, err := d.cfg.Store.ClaimStream(ctx, appID, d.cfg.Holder, now, now.Add(Lease))
	if err != nil || !held {
		return false, err
	}
	if now.Before(st.RetryAt) {
		d.waitUntil(appID, st.RetryAt)
		return false, nil
	}
	// Read under the claim: a holder before this one may have sent some
	// since the head was read.
	events, err := d.cfg.Store.QueuedEvents(ctx, appID, herald.MaxEventsPerMessage)
	if err != nil || len(events) == 0 || !herald.EventsDue(events[0].QueuedAt, len(events) == herald.MaxEventsPerMessage, now) {
		return false, err
	}
	app, err := d.cfg.Apps.App(ctx, appID)
	if err != nil || app.WebhookURL == "" {
		return false, gone(err) // kept until a webhook is set again, or pruned
	}
	secret, err := d.cfg.MasterKey.Open(app.WebhookSecret)
	if err != nil {
		return false, err
	}
	body, err := webhook.EventsBody(events)
	if err != nil {
		return false, err
	}
	msgID := herald.EventsMessageID(appID, events)
	if err := d.cfg.Webhooks.Send(ctx, app.WebhookURL, string(secret), msgID, body); err != nil {
		wait := herald.EventsRetry(st.Failures + 1)
		d.cfg.Logger.Warn("delivery events: message failed; will retry", "app", appID, "message", msgID,
			"events", len(events), "failures", st.Failures+1, "retryIn", wait, "err", err)
		d.waitUntil(appID, now.Add(wait)) // from the attempt's start
		return false, d.cfg.Store.StreamFailed(ctx, appID, d.cfg.Holder, now.Add(wait))
	}
	ids := make([]int64, len(events))
	for i, e := range events {
		ids[i] = e.ID
	}
	return true, d.cfg.Store.SentEvents(ctx, appID, d.cfg.Holder, ids)
}

// waitUntil keeps this node from looking at the app's stream before at.
func (d *Dispatcher) waitUntil(appID string, at time.Time) {
	d.mu.Lock()
	d.retryAt[appID] = at
	d.mu.Unlock()
}

// gone turns "not found" (the app was deleted, and its events with it)
// into nothing to do.
func gone(err error) error {
	if errors.Is(err, herald.ErrNotFound) {
		return nil
	}
	return err
}
