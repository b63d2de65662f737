package delivery

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald"
)

type fanoutWorker struct {
	river.WorkerDefaults[FanoutArgs]
	s *Service
}

// Work resolves the push's users to their devices now, applies consent and
// the night window, and records the deliveries with a send job per chunk.
func (w *fanoutWorker) Work(ctx context.Context, job *river.Job[FanoutArgs]) error {
	s := w.s
	p, err := s.cfg.Store.PushRecord(ctx, job.Args.PushID)
	if err != nil {
		return gone(err)
	}
	if p.StartedAt != nil || (p.Status != herald.StatusSending && p.Status != herald.StatusScheduled) {
		return nil // sent already, or cancelled
	}
	if p.ScheduledAt != nil {
		if !p.ScheduledAt.Equal(job.Args.SendAt) {
			return nil // the push was edited; its new job sends it
		}
		if err := s.waitUntil(ctx, *p.ScheduledAt); err != nil {
			return err
		}
	}
	app, err := s.cfg.Store.App(ctx, p.AppID)
	if err != nil {
		return gone(err)
	}
	var f herald.Fanout
	rs, devices, err := s.recipients(ctx, p)
	if err != nil {
		return err
	}
	if p.Kind.Targeted() {
		f.Recipients, f.ChargeHalf = rs, int64(targetedUsers(devices))
	}
	f.Deliveries = plan(p, rs, devices, herald.IsNight(s.cfg.Now(), app.Location()), s.cfg.ChunkSize)
	f.Jobs = chunkJobs(p.ID, f.Deliveries)
	started, err := s.cfg.Store.StartSending(ctx, p.ID, f)
	if err != nil || !started {
		return err
	}
	c, chunks := herald.CountDeliveries(f.Deliveries), 0
	for _, j := range f.Jobs {
		if _, ok := j.(SendArgs); ok {
			chunks++
		}
	}
	msg := "push fanned out"
	if p.ScheduledAt != nil {
		msg = "scheduled push fired"
	}
	s.cfg.Logger.Info(msg, "app", p.AppID, "push", p.ID, "kind", p.Kind, "users", len(rs), "tokens", c.Tokens,
		"suppressedConsent", c.SuppressedConsent, "suppressedNight", c.SuppressedNight, "chunks", chunks)
	return nil
}

// recipients returns a push's users and their devices now: the users it
// names, or for a topic or all-users push the users of the devices found.
func (s *Service) recipients(ctx context.Context, p herald.Push) ([]herald.Recipient, map[string][]herald.Device, error) {
	if !p.Kind.Targeted() {
		rs, err := s.cfg.Store.Recipients(ctx, p.ID)
		if err != nil {
			return nil, nil, err
		}
		devices, err := s.cfg.Store.DevicesOfUsers(ctx, p.AppID, userIDs(rs))
		return rs, devices, err
	}
	var list []herald.Device
	var err error
	if p.Kind == herald.KindTopic {
		list, err = s.cfg.Store.DevicesOfTopic(ctx, p.AppID, p.Topic)
	} else {
		list, err = s.cfg.Store.AllDevices(ctx, p.AppID)
	}
	if err != nil {
		return nil, nil, err
	}
	var rs []herald.Recipient
	devices := map[string][]herald.Device{}
	for _, d := range list {
		user := "" // devices no user is mapped to share one recipient
		if d.UserID != nil {
			user = *d.UserID
		}
		if _, seen := devices[user]; !seen {
			rs = append(rs, herald.Recipient{UserID: user})
		}
		devices[user] = append(devices[user], d)
	}
	return rs, devices, nil
}

// targetedUsers counts what a topic or all-users push is charged for: each
// user, and each device no user is mapped to.
func targetedUsers(devices map[string][]herald.Device) int {
	n := 0
	for user, ds := range devices {
		if user == "" {
			n += len(ds)
		} else {
			n++
		}
	}
	return n
}

// waitUntil blocks until the clock reads t.
func (s *Service) waitUntil(ctx context.Context, t time.Time) error {
	d := t.Sub(s.cfg.Now())
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return river.JobSnooze(0)
	}
}

// userIDs returns the distinct users of the recipients, in order, without
// the anonymous recipient of unmapped devices.
func userIDs(rs []herald.Recipient) []string {
	seen := make(map[string]bool, len(rs))
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		if r.UserID != "" && !seen[r.UserID] {
			seen[r.UserID] = true
			out = append(out, r.UserID)
		}
	}
	return out
}

// plan makes one delivery per device of each recipient: suppressed ones
// already final, the others pending and numbered into chunks.
func plan(p herald.Push, rs []herald.Recipient, devices map[string][]herald.Device, night bool, chunkSize int) []herald.Delivery {
	var ds []herald.Delivery
	open := 0
	for idx, r := range rs {
		marketing, image := p.MarketingFor(r), p.ContentFor(r).ImageURL != ""
		for _, d := range devices[r.UserID] {
			del := herald.Delivery{
				Seq: len(ds), RecipientIdx: idx, UserID: r.UserID, DeviceID: d.ID, Token: d.Token, Platform: d.Platform,
				AppSourceVersion: d.AppSourceVersion, TokenUpdatedAt: d.TokenUpdatedAt, State: herald.DeliveryPending,
				OldForBadge: p.Badge && herald.VersionBelow(d.AppSourceVersion, herald.BadgeSince),
				OldForImage: image && herald.VersionBelow(d.AppSourceVersion, herald.ImageSince),
			}
			switch herald.Suppress(marketing, d.Consent, night) {
			case herald.SuppressedConsent:
				del.State = herald.DeliverySuppressedConsent
			case herald.SuppressedNight:
				del.State = herald.DeliverySuppressedNight
			default:
				del.Chunk = open / chunkSize
				open++
			}
			ds = append(ds, del)
		}
	}
	return ds
}

// chunkJobs returns a send job per chunk, or the finish job when nothing is
// left to send.
func chunkJobs(pushID string, ds []herald.Delivery) []herald.Job {
	chunks := -1
	for _, d := range ds {
		if d.State == herald.DeliveryPending {
			chunks = max(chunks, d.Chunk)
		}
	}
	if chunks < 0 {
		return []herald.Job{FinishArgs{PushID: pushID}}
	}
	jobs := make([]herald.Job, chunks+1)
	for c := range jobs {
		jobs[c] = SendArgs{PushID: pushID, Chunk: c}
	}
	return jobs
}
