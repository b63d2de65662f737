package delivery

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald"
)

// A push awaiting approval (herald.ApprovalSetting) is accepted with two
// jobs and no fan-out: its lapse at the end of its window (the push's
// job, which an approval replaces with its fan-out and a rejection or a
// cancel cancels) and its push.approval_requested webhook message.

// ApprovalExpiryArgs lapses a push left awaiting approval at At, the end
// of its window.
type ApprovalExpiryArgs struct {
	PushID string    `json:"pushId"`
	At     time.Time `json:"at"`
}

// Kind names the job.
func (ApprovalExpiryArgs) Kind() string { return "herald.approval_expiry" }

// InsertOpts makes the job due at the end of the window.
func (a ApprovalExpiryArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueScheduled, ScheduledAt: a.At}
}

// ApprovalWebhookArgs posts a push's push.approval_requested message, fixed
// at its accept so that every retry sends the same message under the same
// id.
type ApprovalWebhookArgs struct {
	Request herald.ApprovalRequest `json:"request"`
}

// Kind names the job.
func (ApprovalWebhookArgs) Kind() string { return "herald.approval_webhook" }

// InsertOpts allows the first attempt and the retries of every webhook
// message.
func (ApprovalWebhookArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: herald.WebhookAttempts}
}

// acceptJobs are the jobs a push is accepted with: its fan-out; for one
// awaiting approval its lapse and its webhook message instead.
func (s *Service) acceptJobs(p herald.Push) []herald.Job {
	if p.Status == herald.StatusAwaitingApproval {
		return []herald.Job{ApprovalExpiryArgs{PushID: p.ID, At: p.ApprovalDeadline()}, ApprovalWebhookArgs{Request: herald.ApprovalRequestOf(p)}}
	}
	return []herald.Job{s.fanoutJob(p)}
}

// fanoutJob is a push's fan-out: at once, or at its scheduled time (at
// once too when that has passed: River runs a job due in the past now).
func (s *Service) fanoutJob(p herald.Push) FanoutArgs {
	if p.ScheduledAt != nil {
		return s.scheduledJob(p)
	}
	return FanoutArgs{PushID: p.ID, Sends: mayBeLone(p), High: p.High()}
}

// Decide approves or rejects p (a push of app awaiting approval, as read)
// by d.By with d.Reason (d.Action approved or rejected): one step, judged
// on the push as stored (herald.Push.Apply), so that of decisions, a
// cancel and the lapse racing each other exactly one wins. An approved
// push gets its fan-out, at once or at its time (one whose time has
// passed is sent at once), and its charge.
func (s *Service) Decide(ctx context.Context, app herald.App, p herald.Push, d herald.Approval) (herald.Push, error) {
	st := herald.PushStep{Kind: herald.StepReject, At: s.cfg.Now(), By: d.By, Reason: d.Reason}
	if d.Action == herald.ApprovalApproved {
		st.Kind, st.App, st.Job = herald.StepApprove, &app, s.fanoutJob(p)
	}
	next, _, err := s.cfg.Store.StepPush(ctx, p.ID, st)
	return next, err
}

type approvalExpiryWorker struct {
	river.WorkerDefaults[ApprovalExpiryArgs]
	s *Service
}

// Work lapses the push; one decided or cancelled meanwhile is left as it
// is. A run early on this node's clock fails and is retried.
func (w *approvalExpiryWorker) Work(ctx context.Context, job *river.Job[ApprovalExpiryArgs]) error {
	_, _, err := w.s.cfg.Store.StepPush(ctx, job.Args.PushID, herald.PushStep{Kind: herald.StepApprovalExpiry, At: w.s.cfg.Now()})
	if errors.Is(err, herald.ErrBadStep) && !errors.Is(err, herald.ErrApprovalOpen) {
		return nil
	}
	return gone(err)
}

type approvalWebhookWorker struct {
	river.WorkerDefaults[ApprovalWebhookArgs]
	s *Service
}

// Timeout leaves room for the 10 s request timeout.
func (w *approvalWebhookWorker) Timeout(*river.Job[ApprovalWebhookArgs]) time.Duration {
	return 30 * time.Second
}

// NextRetry follows the webhook retry policy (herald.WebhookRetry).
func (w *approvalWebhookWorker) NextRetry(job *river.Job[ApprovalWebhookArgs]) time.Time {
	return webhookNextRetry(w.s.cfg.Now(), job.Attempt) // River's clock is the node's
}

// Work posts the message to the app's current webhook; an app without one,
// or whose webhookEvents leave push.approval_requested out, gets nothing.
func (w *approvalWebhookWorker) Work(ctx context.Context, job *river.Job[ApprovalWebhookArgs]) error {
	s, r := w.s, job.Args.Request
	app, err := s.finishes.App(ctx, r.AppID)
	if err != nil || !app.Takes(herald.WebhookApproval) {
		return gone(err)
	}
	secret, err := s.cfg.MasterKey.Open(app.WebhookSecret)
	if err != nil {
		return err
	}
	err = s.cfg.Webhooks.ApprovalRequested(ctx, app.WebhookURL, string(secret), r)
	return s.webhookFailed(err, job.Attempt, "app", r.AppID, "push", r.PushID, "message", r.ID)
}
