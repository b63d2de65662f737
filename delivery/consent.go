package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald"
)

// consentWorker sends one consent.changed event: the oldest unsent one of
// its user (the store queues one job per user at a time). Ending the
// event, sent or given up, queues the user's next one, so a user's events
// arrive in order; a failing receiver holds them back, retried on the
// schedule of every webhook message.
type consentWorker struct {
	river.WorkerDefaults[herald.ConsentEventJob]
	s *Service
}

// Timeout leaves room for the 10 s request timeout.
func (w *consentWorker) Timeout(*river.Job[herald.ConsentEventJob]) time.Duration {
	return 30 * time.Second
}

// NextRetry follows the webhook retry policy (herald.WebhookRetry).
func (w *consentWorker) NextRetry(job *river.Job[herald.ConsentEventJob]) time.Time {
	return webhookNextRetry(w.s.cfg.Now(), job.Attempt) // River's clock is the node's
}

// Work posts the event to the app's current webhook and ends it. An app
// that removed its webhook, or took consent.changed off its list, drops
// it (and, one by one, the user's later ones).
func (w *consentWorker) Work(ctx context.Context, job *river.Job[herald.ConsentEventJob]) error {
	s, a := w.s, job.Args
	rec, state, err := s.consents.ConsentEvent(ctx, a.AppID, a.UserID, a.Seq)
	if err != nil || state != herald.EventPending {
		return gone(err) // ended by an earlier run, or the app was deleted
	}
	app, err := s.consents.App(ctx, a.AppID)
	if err != nil {
		return gone(err)
	}
	if !app.Takes(herald.WebhookConsent) {
		return w.end(ctx, a, herald.EventDropped)
	}
	secret, err := s.cfg.MasterKey.Open(app.WebhookSecret)
	if err == nil {
		err = s.cfg.Webhooks.ConsentChanged(ctx, app.WebhookURL, string(secret), rec)
	}
	if err == nil {
		return w.end(ctx, a, herald.EventSent)
	}
	return w.failed(ctx, job, herald.ConsentEventID(rec.AppID, rec.ID), err)
}

// failed handles a failed attempt: retried while the webhook retry policy
// allows (herald.WebhookRetry); then the event is dropped so the user's
// next one can go, and the job cancelled.
func (w *consentWorker) failed(ctx context.Context, job *river.Job[herald.ConsentEventJob], msgID string, err error) error {
	a, log := job.Args, w.s.cfg.Logger
	attrs := []any{"app", a.AppID, "message", msgID, "attempt", job.Attempt, "err", err}
	if _, retry := herald.WebhookRetry(job.Attempt, err); retry {
		log.Warn("consent webhook delivery failed; will retry", attrs...)
		return err
	}
	log.Error("consent webhook delivery failed; given up", attrs...)
	if endErr := w.end(ctx, a, herald.EventDropped); endErr != nil {
		return fmt.Errorf("%w; ending the event: %w", err, endErr)
	}
	return river.JobCancel(err)
}

// end records the event's end and queues the user's next one.
func (w *consentWorker) end(ctx context.Context, a herald.ConsentEventJob, end herald.ConsentEventState) error {
	_, err := w.s.consents.EndConsentEvent(ctx, a.AppID, a.UserID, a.Seq, end)
	return gone(err)
}
