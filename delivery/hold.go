package delivery

import (
	"context"

	"github.com/heraldpush/herald"
)

// Release lets a held push (see herald.HoldStore) go on where it stood:
// it is given back the status it was held in, with a job for each piece
// of work it had left. A chunk's run takes over the sends that were in
// flight at the copy's instant (sent again, recorded as resent); the
// slots settled before it are not sent again.
func (s *Service) Release(ctx context.Context, pushID string) (herald.Push, error) {
	w, err := s.cfg.Store.HeldWork(ctx, pushID)
	if err != nil {
		return herald.Push{}, err
	}
	p, _, err := s.cfg.Store.StepPush(ctx, pushID, herald.PushStep{Kind: herald.StepRelease, At: s.cfg.Now(), Jobs: releaseJobs(w)})
	return p, err
}

// releaseJobs are the jobs of what a held push has left: its fan-out when
// it had not ended (a scheduled push's for its time, which has come),
// each chunk not done (a deferred one for its morning), and its finish
// when nothing else is open.
func releaseJobs(w herald.HeldWork) []herald.Job {
	p := w.Push
	var jobs []herald.Job
	if !w.FanoutDone {
		a := FanoutArgs{PushID: p.ID, High: p.High()}
		if p.StartedAt == nil && p.ScheduledAt != nil {
			a.SendAt = *p.ScheduledAt // the fan-out's check of its job; run at once
		}
		jobs = append(jobs, a)
	}
	for _, c := range w.Chunks {
		a := SendArgs{PushID: p.ID, Chunk: c.Chunk, High: p.High()}
		if c.Morning != nil {
			a.Morning = *c.Morning // the run waits for it when it has not come
		}
		jobs = append(jobs, a)
	}
	if w.FanoutDone && w.OpenChunks == 0 {
		jobs = append(jobs, FinishArgs{PushID: p.ID})
	}
	return jobs
}
