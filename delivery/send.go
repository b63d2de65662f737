package delivery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald"
)

type sendWorker struct {
	river.WorkerDefaults[SendArgs]
	s *Service
}

func (w *sendWorker) Timeout(*river.Job[SendArgs]) time.Duration { return 10 * time.Minute }

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
	finish := FinishArgs{PushID: id}
	app, err := s.cfg.Store.App(ctx, p.AppID)
	if err != nil {
		return gone(err)
	}
	if len(app.FCMCredentials) == 0 {
		return s.cfg.Store.FailPush(ctx, id, "FCM credentials were removed", finish)
	}
	c := &chunk{s: s, app: app, push: p, loc: app.Location()}
	if c.serviceAccount, err = s.serviceAccount(app); err != nil {
		return s.cfg.Store.FailPush(ctx, id, "FCM credentials cannot be opened", finish)
	}
	if p.Kind == herald.KindMessages {
		if c.recipients, err = s.cfg.Store.Recipients(ctx, id); err != nil {
			return err
		}
	}
	open, err := s.cfg.Store.OpenDeliveries(ctx, id, job.Args.Chunk)
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
	r := c.sendAll(ctx, open)
	switch {
	case r.err != nil:
		return r.err
	case r.stopped:
		return nil // the push failed meanwhile
	case r.authFailure != "":
		return s.cfg.Store.FailPush(ctx, id, r.authFailure, finish)
	case r.retryIn > 0:
		return river.JobSnooze(min(r.retryIn, max(time.Second, deadline.Sub(s.cfg.Now()))))
	}
	return s.cfg.Store.CompleteChunk(ctx, id, job.Args.Chunk, finish)
}

// chunk is what sending one chunk of a push needs.
type chunk struct {
	s          *Service
	app        herald.App
	push       herald.Push
	recipients []herald.Recipient // per-message content, on /messages
	// serviceAccount is the app's FCM service-account file.
	serviceAccount []byte
	loc            *time.Location
	giveUp         bool
}

// chunkResult sums up a chunk's sends.
type chunkResult struct {
	retryIn     time.Duration
	authFailure string
	stopped     bool
	err         error
}

// sendAll sends the deliveries in waves of Concurrency. Each wave is checked
// again at send time (the push still sending, each device still holding its
// token, consent and the night window now), marked in flight, sent in
// parallel, and its outcomes committed in one transaction. A crash can thus
// only re-send the wave that was in flight, and exactly those deliveries are
// recorded as resent.
func (c *chunk) sendAll(ctx context.Context, ds []herald.Delivery) chunkResult {
	var res chunkResult
	for start := 0; start < len(ds) && res.authFailure == ""; start += c.s.cfg.Concurrency {
		wave := ds[start:min(start+c.s.cfg.Concurrency, len(ds))]
		outcomes, toSend, err := c.recheck(ctx, wave)
		if err != nil || outcomes == nil {
			res.err, res.stopped = err, err == nil
			return res
		}
		seqs := make([]int, 0, len(toSend))
		for _, i := range toSend {
			seqs = append(seqs, wave[i].Seq)
		}
		if res.err = c.s.cfg.Store.MarkInflight(ctx, c.push.ID, seqs); res.err != nil {
			return res
		}
		retryIns := make([]time.Duration, len(wave))
		auths := make([]string, len(wave))
		var wg sync.WaitGroup
		for _, i := range toSend {
			wg.Go(func() { outcomes[i], retryIns[i], auths[i] = c.sendOne(ctx, wave[i]) })
		}
		wg.Wait()
		for i, o := range outcomes {
			c.s.cfg.Observe(string(o.State))
			res.retryIn = max(res.retryIn, retryIns[i])
			if auths[i] != "" && res.authFailure == "" {
				res.authFailure = auths[i]
			}
		}
		// Recorded even when the job is being cancelled: these were sent.
		if res.err = c.s.cfg.Store.RecordOutcomes(context.WithoutCancel(ctx), c.app.ID, c.push.ID, outcomes); res.err != nil {
			return res
		}
	}
	return res
}

// recheck judges a wave at send time. It returns an outcome for every
// delivery, final for those not to be sent, and the indexes of those to
// send; nil outcomes when the push is no longer sending.
func (c *chunk) recheck(ctx context.Context, wave []herald.Delivery) ([]herald.Outcome, []int, error) {
	status, err := c.s.cfg.Store.PushStatus(ctx, c.push.ID)
	if err != nil || status != herald.StatusSending {
		return nil, nil, err
	}
	ids := make([]string, len(wave))
	for i, d := range wave {
		ids[i] = d.DeviceID
	}
	devices, err := c.s.cfg.Store.DevicesByID(ctx, c.app.ID, ids)
	if err != nil {
		return nil, nil, err
	}
	night := herald.IsNight(c.s.cfg.Now(), c.loc)
	outcomes := make([]herald.Outcome, len(wave))
	var toSend []int
	for i, d := range wave {
		o := herald.Outcome{Seq: d.Seq, DeviceID: d.DeviceID, Token: d.Token}
		dev, ok := devices[d.DeviceID]
		marketing := c.push.Marketing
		if c.recipients != nil {
			marketing = c.push.MarketingFor(c.recipients[d.RecipientIdx])
		}
		switch {
		case !ok || dev.Token != d.Token:
			// Withdrawn, or the token deleted or moved since the fan-out.
			o.State, o.Reason, o.Error = herald.DeliveryUndeliverable, herald.ReasonNoToken, "token removed before sending"
		case herald.Suppress(marketing, dev.Consent, night) == herald.SuppressedConsent:
			o.State = herald.DeliverySuppressedConsent
		case herald.Suppress(marketing, dev.Consent, night) == herald.SuppressedNight:
			o.State = herald.DeliverySuppressedNight
		default:
			toSend = append(toSend, i)
		}
		outcomes[i] = o
	}
	return outcomes, toSend, nil
}

// sendOne sends one delivery and classifies the answer.
func (c *chunk) sendOne(ctx context.Context, d herald.Delivery) (o herald.Outcome, retryIn time.Duration, authFailure string) {
	s, p := c.s, c.push
	content := p.Content
	if c.recipients != nil {
		content = p.ContentFor(c.recipients[d.RecipientIdx])
	}
	o = herald.Outcome{Seq: d.Seq, State: herald.DeliverySent, DeviceID: d.DeviceID, Token: d.Token}
	err := s.cfg.Sender.Deliver(ctx, c.app.ID, c.serviceAccount, herald.Notification{
		Token: d.Token, PushID: p.ID, Title: content.Title, Body: content.Content,
		ImageURL: content.ImageURL, LinkURL: content.LinkURL, Badge: p.Badge,
	})
	if err == nil {
		return o, 0, ""
	}
	o.Error = err.Error()
	if ctx.Err() != nil {
		// Cut off mid-request: FCM may have the message. It stays in flight,
		// so the next attempt sends it again and records it as resent.
		o.State = herald.DeliveryInflight
		return o, 0, ""
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
			return o, 0, ""
		}
		o.State = herald.DeliveryRetry
		return o, Backoff(d.Attempts+1, se.RetryAfter), ""
	case herald.SendAuth:
		// Back to pending: the push fails as a whole, with the reason.
		o.State = herald.DeliveryPending
		return o, 0, "FCM refused the app's credentials: " + o.Error
	default:
		o.State = herald.DeliveryFailed
	}
	return o, 0, ""
}
