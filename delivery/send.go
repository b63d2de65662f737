package delivery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/fcm"
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
	p, err := s.cfg.Store.Push(ctx, id)
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
	cred, err := s.credentials(app)
	if err != nil {
		return s.cfg.Store.FailPush(ctx, id, "FCM credentials cannot be opened", finish)
	}
	var rs []herald.Recipient
	if p.Kind == herald.KindMessages {
		if rs, err = s.cfg.Store.Recipients(ctx, id); err != nil {
			return err
		}
	}
	open, err := s.cfg.Store.OpenDeliveries(ctx, id, job.Args.Chunk)
	if err != nil {
		return err
	}
	r := s.sendAll(ctx, app, cred, p, rs, open, time.Since(job.CreatedAt) > s.cfg.RetryFor)
	if r.err != nil {
		return r.err
	}
	switch {
	case r.authFailure != "":
		return s.cfg.Store.FailPush(ctx, id, r.authFailure, finish)
	case r.retryIn > 0:
		return river.JobSnooze(r.retryIn)
	}
	return s.cfg.Store.CompleteChunk(ctx, id, job.Args.Chunk, finish)
}

// chunkResult sums up a chunk's sends.
type chunkResult struct {
	retryIn     time.Duration
	authFailure string
	err         error
}

// sendAll sends the deliveries in waves of Concurrency: each wave is marked
// in flight, sent in parallel, and its outcomes committed in one
// transaction. A crash can thus only re-send the wave that was in flight,
// and exactly those deliveries are recorded as resent.
func (s *Service) sendAll(ctx context.Context, app herald.App, cred fcm.Credentials, p herald.Push, rs []herald.Recipient, ds []herald.Delivery, giveUp bool) chunkResult {
	var res chunkResult
	for start := 0; start < len(ds) && res.authFailure == ""; start += s.cfg.Concurrency {
		wave := ds[start:min(start+s.cfg.Concurrency, len(ds))]
		seqs := make([]int, len(wave))
		for i, d := range wave {
			seqs[i] = d.Seq
		}
		if res.err = s.cfg.Store.MarkInflight(ctx, p.ID, seqs); res.err != nil {
			return res
		}
		outcomes := make([]herald.Outcome, len(wave))
		retryIns := make([]time.Duration, len(wave))
		auths := make([]string, len(wave))
		var wg sync.WaitGroup
		for i, d := range wave {
			wg.Go(func() { outcomes[i], retryIns[i], auths[i] = s.sendOne(ctx, cred, p, rs, d, giveUp) })
		}
		wg.Wait()
		for i, o := range outcomes {
			s.cfg.Observe(string(o.State))
			res.retryIn = max(res.retryIn, retryIns[i])
			if auths[i] != "" && res.authFailure == "" {
				res.authFailure = auths[i]
			}
		}
		// Recorded even when the job is being cancelled: these were sent.
		if res.err = s.cfg.Store.RecordOutcomes(context.WithoutCancel(ctx), app.ID, p.ID, outcomes); res.err != nil {
			return res
		}
	}
	return res
}

// sendOne sends one delivery and classifies the answer.
func (s *Service) sendOne(ctx context.Context, cred fcm.Credentials, p herald.Push, rs []herald.Recipient, d herald.Delivery, giveUp bool) (o herald.Outcome, retryIn time.Duration, authFailure string) {
	content := p.Content
	if rs != nil {
		content = p.ContentFor(rs[d.RecipientIdx])
	}
	msg := fcm.BuildMessage(d.Token, fcm.Notification{
		Title: content.Title, Body: content.Content, ImageURL: content.ImageURL, LinkURL: content.LinkURL,
		PushID: p.ID, Badge: p.Badge,
	})
	o = herald.Outcome{Seq: d.Seq, State: herald.DeliverySent, DeviceID: d.DeviceID, Token: d.Token}
	err := s.cfg.Sender.Send(ctx, cred, msg)
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
	var se *fcm.SendError
	if !errors.As(err, &se) {
		se = &fcm.SendError{Class: fcm.ClassRetry, Err: err}
	}
	switch se.Class {
	case fcm.ClassUnregistered:
		o.State, o.DropDevice, o.Reason = herald.DeliveryUndeliverable, true, herald.ReasonAppDeleted
		if s.cfg.Now().Sub(d.TokenUpdatedAt) > herald.TokenExpiryAge {
			o.Reason = herald.ReasonTokenExpired
		}
	case fcm.ClassInvalidToken, fcm.ClassSenderMismatch:
		o.State, o.DropDevice, o.Reason = herald.DeliveryUndeliverable, true, herald.ReasonTokenExpired
	case fcm.ClassRetry:
		if giveUp {
			o.State, o.Error = herald.DeliveryFailed, fmt.Sprintf("gave up retrying after %s: %s", s.cfg.RetryFor, o.Error)
			return o, 0, ""
		}
		o.State = herald.DeliveryRetry
		return o, Backoff(d.Attempts+1, se.RetryAfter), ""
	case fcm.ClassAuth:
		// Back to pending: the push fails as a whole, with the reason.
		o.State = herald.DeliveryPending
		return o, 0, "FCM refused the app's credentials: " + o.Error
	default:
		o.State = herald.DeliveryFailed
	}
	return o, 0, ""
}
