package delivery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald"
)

type finishWorker struct {
	river.WorkerDefaults[FinishArgs]
	s *Service
}

// Work records the push's unreachable users and end, and queues the webhook
// messages reporting them, in batches of at most 1,000 users. The push is
// read with its counts, final by now (every chunk is complete, or the push
// failed), for the log line of its end. The run that completes a push's
// last chunk finishes it itself (see sendChunk); the job ends a push that
// failed, that had no chunk, or that a cancel or release left to finish.
func (w *finishWorker) Work(ctx context.Context, job *river.Job[FinishArgs]) error {
	return w.s.finish(ctx, job.Args.PushID)
}

// finish records the end of a push every chunk of which is complete (or
// that failed): the finish job's work, also done at once by a cancel
// that closed the push's last open part, so that its answer shows the
// push ended. Finishing twice is harmless: the second finds it finished.
func (s *Service) finish(ctx context.Context, id string) error {
	return s.finishPush(ctx, id, finishing{})
}

// finishing is what a finish may already know of its push: its app and
// its recipients (nil when not read).
type finishing struct {
	app        *herald.App
	recipients []herald.Recipient
}

// finishPush is finish, with what the caller knows of the push.
func (s *Service) finishPush(ctx context.Context, id string, k finishing) error {
	p, err := s.finishes.Push(ctx, id)
	if err != nil || p.FinishedAt != nil {
		return gone(err)
	}
	if k.app == nil {
		app, err := s.finishes.App(ctx, p.AppID)
		if err != nil {
			return gone(err)
		}
		k.app = &app
	}
	users, err := s.trackedUsers(ctx, p, k.recipients)
	if err != nil {
		return err
	}
	ds, err := s.finishes.DeliveriesOf(ctx, id, users)
	if err != nil {
		return err
	}
	unreachable := herald.UnreachableUsers(users, ds)
	var follow []herald.Job
	if k.app.Takes(herald.WebhookUndeliverable) {
		follow = s.webhookJobs(p, unreachable)
	}
	if p.Rule().ConfirmsOnFinish { // the users it reached are confirmed
		follow = append(follow, ReconfirmedArgs{PushID: id})
	}
	if k.app.MarketingCap.On() {
		if err := s.releaseReceipts(ctx, id); err != nil {
			return err
		}
	}
	finished, err := s.finishes.FinishPush(ctx, id, unreachable, follow)
	if err != nil || !finished {
		return err
	}
	c := p.Counts
	attrs := []any{"app", p.AppID, "push", id, "users", p.RequestedUsers, "tokens", c.Tokens, "sent", c.Sent, "failed", c.Failed,
		"suppressedConsent", c.SuppressedConsent, "suppressedNight", c.SuppressedNight, "suppressedCap", c.SuppressedCap,
		"unreachable", len(unreachable)}
	if p.Status == herald.StatusFailed { // FailPush set it before queueing this job
		s.cfg.Logger.Error("push failed", append(attrs, "reason", p.FailureReason)...)
	} else {
		s.cfg.Logger.Info("push done", attrs...)
	}
	return nil
}

// releaseReceipts gives back the frequency-cap receipts of a push whose
// deliveries to a user all ended unsent (failed, unreachable, cancelled,
// a deferred part cancelled): a user counts a push only when a device of
// theirs was sent it, or may have been (a send cut off, Resent). Every send of the push is settled by its finish, so
// what the deliveries say no longer changes; a finish run twice releases
// the same receipts twice, harmlessly.
func (s *Service) releaseReceipts(ctx context.Context, id string) error {
	users, err := s.finishes.ReceiptUsers(ctx, id)
	if err != nil || len(users) == 0 {
		return err
	}
	ds, err := s.finishes.DeliveriesOf(ctx, id, users)
	if err != nil {
		return err
	}
	sent := make(map[string]bool, len(users))
	for _, d := range ds {
		if d.State == herald.DeliverySent || d.Resent {
			sent[d.UserID] = true // a send cut off may have reached FCM: it counts
		}
	}
	var unsent []string
	for _, u := range users {
		if !sent[u] {
			unsent = append(unsent, u)
		}
	}
	if len(unsent) == 0 {
		return nil
	}
	return s.finishes.ReleaseReceipts(ctx, id, unsent)
}

// trackedUsers returns the users a push may have failed to reach: those it
// names (rs, when read already), or for a topic, all-users or token push
// (whose users were found through their devices) those with an
// undeliverable delivery.
func (s *Service) trackedUsers(ctx context.Context, p herald.Push, rs []herald.Recipient) ([]string, error) {
	if p.Rule().Targeted {
		return s.finishes.UndeliverableUsers(ctx, p.ID)
	}
	if rs != nil {
		return userIDs(rs), nil
	}
	rs, err := s.finishes.Recipients(ctx, p.ID)
	return userIDs(rs), err
}

// webhookJobs makes one webhook job per batch of at most 1,000 users.
func (s *Service) webhookJobs(p herald.Push, unreachable []herald.Unreachable) []herald.Job {
	var jobs []herald.Job
	now := s.cfg.Now().UTC()
	for i := 0; i*herald.MaxUsersPerReport < len(unreachable); i++ {
		batch := unreachable[i*herald.MaxUsersPerReport : min((i+1)*herald.MaxUsersPerReport, len(unreachable))]
		jobs = append(jobs, WebhookArgs{Report: herald.UndeliverableReport{
			ID: fmt.Sprintf("msg_%s_%d", p.ID, i), At: now, AppID: p.AppID, PushID: p.ID,
			RequestGroupID: p.RequestGroupID, Users: batch,
		}})
	}
	return jobs
}

type webhookWorker struct {
	river.WorkerDefaults[WebhookArgs]
	s *Service
}

// Timeout leaves room for the 10 s request timeout.
func (w *webhookWorker) Timeout(*river.Job[WebhookArgs]) time.Duration { return 30 * time.Second }

// NextRetry follows the webhook retry policy (herald.WebhookRetry).
func (w *webhookWorker) NextRetry(job *river.Job[WebhookArgs]) time.Time {
	return webhookNextRetry(w.s.cfg.Now(), job.Attempt) // River's clock is the node's
}

// Work posts the message to the app's current webhook; an app that removed
// its webhook, or took push.undeliverable off its list, gets nothing.
func (w *webhookWorker) Work(ctx context.Context, job *river.Job[WebhookArgs]) error {
	s := w.s
	app, err := s.finishes.App(ctx, job.Args.Report.AppID)
	if err != nil || !app.Takes(herald.WebhookUndeliverable) {
		return gone(err)
	}
	secret, err := s.cfg.MasterKey.Open(app.WebhookSecret)
	if err != nil {
		return err
	}
	err = s.cfg.Webhooks.Report(ctx, app.WebhookURL, string(secret), job.Args.Report)
	r := job.Args.Report
	return s.webhookFailed(err, job.Attempt, "app", r.AppID, "push", r.PushID, "message", r.ID)
}

// webhookFailed is what a webhook message's job answers River after an
// attempt that ended in err (nil: sent): retried while the webhook retry
// policy allows (herald.WebhookRetry), cancelled when retrying cannot
// help; logged with attrs either way.
func (s *Service) webhookFailed(err error, attempt int, attrs ...any) error {
	if err == nil {
		return nil
	}
	attrs = append(attrs, "attempt", attempt, "err", err)
	switch _, retry := herald.WebhookRetry(attempt, err); {
	case retry:
		s.cfg.Logger.Warn("webhook delivery failed; will retry", attrs...)
		return err
	case errors.Is(err, herald.ErrNoRetry):
		s.cfg.Logger.Error("webhook delivery failed; not retried", attrs...)
		return river.JobCancel(err)
	default:
		s.cfg.Logger.Error("webhook delivery failed; retries exhausted", attrs...)
		return err // the job's last attempt (InsertOpts' MaxAttempts)
	}
}

// webhookNextRetry is River's NextRetry for both webhook workers: the
// wait herald.WebhookRetry gives after the attempt, from now.
func webhookNextRetry(now time.Time, attempt int) time.Time {
	d, _ := herald.WebhookRetry(attempt, nil)
	return now.Add(d)
}
