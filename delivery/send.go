package delivery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald"
)

type sendWorker struct {
	river.WorkerDefaults[SendArgs]
	s *Service
}

// Work sends the chunk's open deliveries, records each outcome, and then
// either snoozes until the retriable ones are due, fails the push (the app's
// credentials are refused), or completes the chunk.
func (w *sendWorker) Work(ctx context.Context, job *river.Job[SendArgs]) error {
	s, id := w.s, job.Args.PushID
	p, err := s.cfg.Store.PushRecord(ctx, id)
	if err != nil {
		return gone(err)
	}
	if p.Status != herald.StatusSending {
		return nil // failed or finished meanwhile
	}
	app, err := s.cfg.Store.App(ctx, p.AppID)
	if err != nil {
		return gone(err)
	}
	if len(app.FCMCredentials) == 0 {
		return s.fail(ctx, p, "FCM credentials were removed")
	}
	c := &chunk{s: s, app: app, push: p, loc: app.Location(), attempt: job.Attempt}
	if c.serviceAccount, err = s.serviceAccount(app); err != nil {
		return s.fail(ctx, p, "FCM credentials cannot be opened")
	}
	c.sender = s.cfg.Sender.ForApp(app.ID, c.serviceAccount)
	if p.Kind.PerRecipient() {
		if c.recipients, err = s.cfg.Store.Recipients(ctx, id); err != nil {
			return err
		}
	}
	work, err := s.cfg.Store.ResumeChunk(ctx, id, job.Args.Chunk)
	if err != nil {
		return err
	}
	// Retriable failures are retried for at most RetryFor from the push's
	// start; the last try happens at that deadline.
	deadline := p.CreatedAt.Add(s.cfg.RetryFor)
	if p.StartedAt != nil {
		deadline = p.StartedAt.Add(s.cfg.RetryFor)
	}
	c.giveUp = !s.cfg.Now().Before(deadline)
	c.yieldAt = time.Now().Add(sendSlice) // real time: it bounds the job's run, see RescueAfter
	r := c.sendRows(ctx, work.Open)
	if r.carryOn() {
		c.sendSlots(ctx, job.Args.Chunk, work, &r)
	}
	if r.warning != "" {
		s.warn(ctx, app, p, r.warning)
	}
	if r.gaveUp > 0 {
		s.cfg.Logger.Error("gave up retrying deliveries", "app", app.ID, "push", id, "chunk", job.Args.Chunk,
			"deliveries", r.gaveUp, "retriedFor", s.cfg.RetryFor)
	}
	switch {
	case r.err != nil:
		return r.err
	case r.stopped:
		return nil // the push failed meanwhile
	case r.authFailure != "":
		s.warn(ctx, app, p, r.authFailure)
		return s.fail(ctx, p, r.authFailure)
	case r.more:
		return river.JobSnooze(0)
	case r.retryIn > 0:
		return river.JobSnooze(min(r.retryIn, max(time.Second, deadline.Sub(s.cfg.Now()))))
	}
	return s.cfg.Store.CompleteChunk(ctx, id, job.Args.Chunk, FinishArgs{PushID: id})
}

// fail ends a push that cannot be sent, with the reason.
func (s *Service) fail(ctx context.Context, p herald.Push, reason string) error {
	return s.cfg.Store.FailPush(ctx, p.ID, reason, FinishArgs{PushID: p.ID})
}

// warn tells the operator that FCM refused something about the app's
// credentials: in the log and on the app's page.
func (s *Service) warn(ctx context.Context, app herald.App, p herald.Push, warning string) {
	s.cfg.Logger.Warn("FCM refused the app's credentials", "app", app.ID, "push", p.ID, "reason", warning)
	if err := s.cfg.Store.SetFCMWarning(context.WithoutCancel(ctx), app.ID, warning, s.cfg.Now()); err != nil {
		s.cfg.Logger.Error("recording an FCM warning", "app", app.ID, "err", err)
	}
}

// chunk is what sending one chunk of a push needs.
type chunk struct {
	s          *Service
	app        herald.App
	push       herald.Push
	recipients []herald.Recipient // per-message content, on /messages
	// serviceAccount is the app's FCM service-account file; sender sends
	// with it.
	serviceAccount []byte
	sender         herald.AppSender
	loc            *time.Location
	giveUp         bool
	attempt        int       // of the send job
	yieldAt        time.Time // when the run stops taking on sends
}

// chunkResult sums up a chunk's sends.
type chunkResult struct {
	retryIn     time.Duration
	authFailure string
	// warning is a refusal of the project's APNs or web-push credentials,
	// which failed some deliveries but not the push.
	warning string
	// gaveUp counts deliveries failed because their retries ran out.
	gaveUp int
	// more: the chunk yielded before its last wave, to keep its run short.
	more    bool
	stopped bool
	err     error
}

// carryOn reports whether sending may go on after what res sums up.
func (res *chunkResult) carryOn() bool {
	return res.err == nil && !res.stopped && !res.more && res.authFailure == ""
}

// add sums up one send that came back.
func (res *chunkResult) add(sd *send) {
	res.retryIn = max(res.retryIn, sd.retryIn)
	if sd.authFailure != "" && res.authFailure == "" {
		res.authFailure = sd.authFailure
	}
	if sd.gaveUp {
		res.gaveUp++
	}
	if sd.thirdParty && res.warning == "" {
		res.warning = "FCM could not pass messages on with the project's APNs or web-push credentials: " + sd.outcome.Error
	}
}

// send is one delivery of a wave as judged at send time.
type send struct {
	d       herald.Delivery // with the device and token it goes to now
	outcome herald.Outcome
	// toSend marks a delivery to be sent; marked, one the store marked in
	// flight (its device was unchanged when marked).
	toSend, marked bool
	retryIn        time.Duration
	authFailure    string
	thirdParty     bool
	gaveUp         bool
}

// authorize makes sure an access token is at hand before a wave. A refused
// service account fails the push; an unreachable token endpoint is retried
// with backoff within the push's hour, and then fails the push.
func (c *chunk) authorize(ctx context.Context, res *chunkResult) bool {
	err := c.sender.Authorize(ctx)
	if err == nil {
		return true
	}
	var se *herald.SendError
	switch {
	case ctx.Err() != nil:
		res.err = ctx.Err()
	case errors.As(err, &se) && se.Class == herald.SendAuth:
		res.authFailure = "FCM refused the app's credentials: " + err.Error()
	case c.giveUp:
		res.authFailure = fmt.Sprintf("gave up after %s without an FCM access token: %s", c.s.cfg.RetryFor, err)
	default:
		c.s.cfg.Logger.Warn("FCM access token unavailable; will retry", "app", c.app.ID, "push", c.push.ID, "err", err)
		res.retryIn = Backoff(c.attempt, 0)
	}
	return false
}

// judge resolves a wave at send time. Each delivery goes to the device its
// user holds now (the same device with its current token, or the device a
// reinstall moved the token to); one whose device is gone or is no longer
// the user's is not sent (NO_TOKEN); consent and the night window are
// judged on the device now. It returns nil when the push is no longer
// sending.
//
// Unless verify is set, a wave without advertising is judged as planned,
// without reading the devices: consent does not apply to it, and the
// write that marks it in flight checks every target's device against its
// token and owner (see herald.DeliveryStore.AdvanceChunk), so a device
// that changed is never sent to; the caller judges what the check refused
// again with verify set, which resolves it (refresh, reinstall, NO_TOKEN).
func (c *chunk) judge(ctx context.Context, ds []herald.Delivery, verify bool) ([]send, error) {
	status, err := c.s.cfg.Store.PushStatus(ctx, c.push.ID)
	if err != nil || status != herald.StatusSending {
		return nil, err
	}
	marketing := make([]bool, len(ds))
	for i, d := range ds {
		marketing[i] = c.push.Marketing
		if c.recipients != nil {
			marketing[i] = c.push.MarketingFor(c.recipients[d.RecipientIdx])
		}
		verify = verify || marketing[i]
	}
	r := resolver{asPlanned: !verify}
	if verify {
		if r, err = c.resolver(ctx, ds); err != nil {
			return nil, err
		}
	}
	night := herald.IsNight(c.s.cfg.Now(), c.loc)
	wave := make([]send, len(ds))
	for i, d := range ds {
		o := herald.Outcome{Seq: d.Seq, DeviceID: d.DeviceID, Token: d.Token}
		marketing := marketing[i]
		dev, ok := r.resolve(d)
		switch {
		case !ok:
			o.State, o.Reason, o.Error = herald.DeliveryUndeliverable, herald.ReasonNoToken, "the device no longer holds a token of the user"
		case herald.Suppress(marketing, dev.Consent, night) == herald.SuppressedConsent:
			o.State = herald.DeliverySuppressedConsent
		case herald.Suppress(marketing, dev.Consent, night) == herald.SuppressedNight:
			o.State = herald.DeliverySuppressedNight
		default:
			d.DeviceID, d.Token, d.TokenUpdatedAt = dev.ID, dev.Token, dev.TokenUpdatedAt
			o.DeviceID, o.Token = dev.ID, dev.Token
			wave[i].toSend = true
		}
		wave[i].d, wave[i].outcome = d, o
	}
	return wave, nil
}

// resolver loads the devices a wave's deliveries may go to now.
func (c *chunk) resolver(ctx context.Context, ds []herald.Delivery) (resolver, error) {
	r := resolver{personal: !c.push.Targeted()}
	if c.push.StartedAt != nil {
		r.fannedOut = *c.push.StartedAt
	}
	var err error
	if r.personal {
		users := make([]string, 0, len(ds))
		for _, d := range ds {
			users = append(users, d.UserID)
		}
		r.ofUser, err = c.s.cfg.Store.DevicesOfUsers(ctx, c.app.ID, users)
		return r, err
	}
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.DeviceID
	}
	r.byID, err = c.s.cfg.Store.DevicesByID(ctx, c.app.ID, ids)
	return r, err
}

// resolver finds the device a delivery planned at fan-out goes to now.
type resolver struct {
	// asPlanned: each delivery goes to the device and token it was
	// planned with, as the guarded write will check (see judge).
	asPlanned bool
	// personal: the push names its users (users, messages), so a device
	// must still be mapped to the delivery's user. A topic, all-users or
	// token push (herald.PushKind.Targeted) goes to the device itself,
	// whoever uses it.
	personal  bool
	fannedOut time.Time
	ofUser    map[string][]herald.Device // personal: each user's devices now
	byID      map[string]herald.Device   // otherwise: the devices by id
}

// resolve returns the device d goes to now: its own device while that is
// still the user's (with the token it holds now, after a refresh), else the
// user's device that was registered after the fan-out with d's token (the
// app reinstalled: same token, new device id). No other delivery of the
// push can be going to such a device, so nothing is sent twice.
func (r resolver) resolve(d herald.Delivery) (herald.Device, bool) {
	if r.asPlanned {
		return herald.Device{ID: d.DeviceID, Token: d.Token, TokenUpdatedAt: d.TokenUpdatedAt}, true
	}
	if !r.personal {
		dev, ok := r.byID[d.DeviceID]
		return dev, ok
	}
	var moved *herald.Device
	for i, dev := range r.ofUser[d.UserID] {
		if dev.ID == d.DeviceID {
			return dev, true
		}
		if dev.Token == d.Token && dev.CreatedAt.After(r.fannedOut) {
			moved = &r.ofUser[d.UserID][i]
		}
	}
	if moved == nil {
		return herald.Device{}, false
	}
	return *moved, true
}

// sendOne sends one delivery and classifies the answer into sd.
func (c *chunk) sendOne(ctx context.Context, sd *send) {
	s, p, d := c.s, c.push, sd.d
	content := p.Content
	if c.recipients != nil {
		content = p.ContentFor(c.recipients[d.RecipientIdx])
	}
	o := &sd.outcome
	o.State = herald.DeliverySent
	err := c.sender.Deliver(ctx, herald.Notification{
		Token: d.Token, PushID: p.ID, Title: content.Title, Body: content.Content,
		ImageURL: content.ImageURL, LinkURL: content.LinkURL, Badge: p.Badge,
		ValidateOnly: c.app.Sandbox, // a sandbox app's sends are only validated
	})
	if err == nil {
		return
	}
	o.Error = err.Error()
	if ctx.Err() != nil {
		// Cut off mid-request: FCM may have the message. It stays in flight,
		// so the next attempt sends it again and records it as resent.
		o.State = herald.DeliveryInflight
		return
	}
	var se *herald.SendError
	if !errors.As(err, &se) {
		se = &herald.SendError{Class: herald.SendRetry, Err: err}
	}
	switch se.Class {
	case herald.SendUnregistered:
		o.State, o.DropDevice, o.Reason = herald.DeliveryUndeliverable, true, herald.ReasonAppDeleted
		if s.cfg.Now().Sub(d.TokenUpdatedAt) > herald.TokenExpiryAge {
			o.Reason = herald.ReasonTokenExpired
		}
	case herald.SendInvalidToken:
		o.State, o.DropDevice, o.Reason = herald.DeliveryUndeliverable, true, herald.ReasonTokenExpired
	case herald.SendRetry:
		if c.giveUp {
			o.State, o.Error = herald.DeliveryFailed, fmt.Sprintf("gave up retrying after %s: %s", s.cfg.RetryFor, o.Error)
			sd.gaveUp = true
			return
		}
		o.State = herald.DeliveryRetry
		sd.retryIn = Backoff(d.Attempts+1, se.RetryAfter)
	case herald.SendAuth:
		// Back to pending: the push fails as a whole, with the reason.
		o.State = herald.DeliveryPending
		sd.authFailure = "FCM refused the app's credentials: " + o.Error
	case herald.SendThirdPartyAuth:
		o.State, sd.thirdParty = herald.DeliveryFailed, true
	default:
		o.State = herald.DeliveryFailed
	}
}
