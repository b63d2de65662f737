package sqlstore

import (
	"context"
	"errors"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/heraldpush/herald"
)

// Queue is the part of River's client a store uses to insert and cancel
// jobs in its own transactions, on an engine whose transactions are TTx.
type Queue[TTx any] interface {
	InsertManyTx(ctx context.Context, tx TTx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
	JobCancelTx(ctx context.Context, tx TTx, jobID int64) (*rivertype.JobRow, error)
}

// errNoQueue is a job inserted before the store was given its queue.
var errNoQueue = errors.New("sqlstore: the store has no job queue")

// InsertJobs inserts jobs through q in tx and returns their ids, in order.
func InsertJobs[TTx any](ctx context.Context, q Queue[TTx], tx TTx, jobs []herald.Job) ([]int64, error) {
	if q == nil {
		return nil, errNoQueue
	}
	params := make([]river.InsertManyParams, len(jobs))
	for i, j := range jobs {
		params[i] = river.InsertManyParams{Args: j}
	}
	res, err := q.InsertManyTx(ctx, tx, params)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(res))
	for i, r := range res {
		ids[i] = r.Job.ID
	}
	return ids, nil
}

// CancelJob cancels a job through q in tx.
func CancelJob[TTx any](ctx context.Context, q Queue[TTx], tx TTx, id int64) error {
	if q == nil {
		return errNoQueue
	}
	_, err := q.JobCancelTx(ctx, tx, id)
	return err
}

// QueueRunner is a started River client as its service stops it: Stop
// lets running jobs finish, StopAndCancel cancels them.
type QueueRunner interface {
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
}
