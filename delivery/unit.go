package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/heraldpush/herald"
)

// JobUnit is one of delivery's jobs made ready to run by a runner other
// than River (the seeded simulation, internal/sim): its worker's Work,
// NextRetry and Timeout, as River calls them. River's middleware
// (storeRetry) is the runner's to apply.
type JobUnit struct {
	// Work runs the job as River's worker does.
	Work func(ctx context.Context) error
	// NextRetry is when the job runs again after an error; zero for
	// River's default backoff.
	NextRetry func() time.Time
	// Timeout bounds the job's run; zero for JobTimeout.
	Timeout time.Duration
}

// Unit returns the job of row (its Kind and EncodedArgs, its Attempt) as
// the worker Workers registers for its kind would run it.
func (s *Service) Unit(row *rivertype.JobRow) (JobUnit, error) {
	switch row.Kind {
	case FanoutArgs{}.Kind():
		return unit[FanoutArgs](row, &fanoutWorker{s: s})
	case SendArgs{}.Kind():
		return unit[SendArgs](row, &sendWorker{s: s})
	case FinishArgs{}.Kind():
		return unit[FinishArgs](row, &finishWorker{s: s})
	case WebhookArgs{}.Kind():
		return unit[WebhookArgs](row, &webhookWorker{s: s})
	case herald.ConsentEventJob{}.Kind():
		return unit[herald.ConsentEventJob](row, &consentWorker{s: s})
	case herald.ConsentNoticeJob{}.Kind():
		return unit[herald.ConsentNoticeJob](row, &noticeWorker{s: s})
	case DailyArgs{}.Kind():
		return unit[DailyArgs](row, &dailyWorker{s: s})
	case ReconfirmedArgs{}.Kind():
		return unit[ReconfirmedArgs](row, &reconfirmedWorker{s: s})
	case ApprovalExpiryArgs{}.Kind():
		return unit[ApprovalExpiryArgs](row, &approvalExpiryWorker{s: s})
	case ApprovalWebhookArgs{}.Kind():
		return unit[ApprovalWebhookArgs](row, &approvalWebhookWorker{s: s})
	}
	return JobUnit{}, fmt.Errorf("delivery: no worker for jobs of kind %q", row.Kind)
}

func unit[T river.JobArgs](row *rivertype.JobRow, w river.Worker[T]) (JobUnit, error) {
	job := &river.Job[T]{JobRow: row}
	if err := json.Unmarshal(row.EncodedArgs, &job.Args); err != nil {
		return JobUnit{}, fmt.Errorf("delivery: job %d of kind %s: %w", row.ID, row.Kind, err)
	}
	return JobUnit{
		Work:      func(ctx context.Context) error { return w.Work(ctx, job) },
		NextRetry: func() time.Time { return w.NextRetry(job) },
		Timeout:   w.Timeout(job),
	}, nil
}
