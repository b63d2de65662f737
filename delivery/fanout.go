package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/sendstore"
)

type fanoutWorker struct {
	river.WorkerDefaults[FanoutArgs]
	s *Service
}

// Work resolves the push's users to their devices now, applies consent and
// the night window, and records the deliveries with a send job per chunk
// (see fanout), or sends a lone chunk itself (see lone); its run yields
// after Config.SendSlice, to go on in a new one.
func (w *fanoutWorker) Work(ctx context.Context, job *river.Job[FanoutArgs]) error {
	if job.Args.High {
		ctx = herald.WithHighPriority(ctx)
	}
	return w.s.fanout(ctx, job.Args, time.Now().Add(w.s.cfg.SendSlice), job.Attempt) // real time: it bounds the job's run, see RescueAfter
}

// fanout runs a push's fan-out from where it stands. A topic or all-users
// push reads its devices a page at a time, each page recorded in its own
// transaction, so its sends begin with the first page and a run that
// stops resumes after the last page recorded. Of several runs at once
// (the push's job, the schedule watch of each node) each page is recorded
// by one; a run that finds the fan-out moved on stops, leaving it to the
// run that moved it (the watch takes up a fan-out whose run stopped). The
// run yields (river.JobSnooze(0)) once the clock passes yieldAt, when set.
//
// attempt is the job's (0 for a run of the watch). A push's lone chunk
// has no send job: the fan-out job's run that records it sends it at
// once, and a later run of the job (after a crash, a yield or an error)
// sends what is left of it, finishing the push (see sendChunk).
func (s *Service) fanout(ctx context.Context, args FanoutArgs, yieldAt time.Time, attempt int) error {
	p, err := s.fanouts.PushRecord(ctx, args.PushID)
	if err != nil {
		return gone(err)
	}
	from, done, err := s.fanouts.FanoutProgress(ctx, p.ID)
	switch {
	case err != nil:
		return gone(err)
	case p.Status != herald.StatusSending && p.Status != herald.StatusScheduled:
		return nil // cancelled, failed or ended
	case done && attempt > 0 && lone(p, from, args.Sends):
		return s.send(ctx, SendArgs{PushID: p.ID}, attempt, false) // the chunk a run before this one began
	case done:
		return nil // fanned out already
	case p.StartedAt == nil && p.ScheduledAt != nil:
		if !p.ScheduledAt.Equal(args.SendAt) {
			return nil // the push was edited; its new job sends it
		}
		if err := s.waitUntil(ctx, *p.ScheduledAt); err != nil {
			return err
		}
	}
	app, err := s.fanouts.App(ctx, p.AppID)
	if err != nil {
		return gone(err)
	}
	var rs []herald.Recipient // a push that names its users: read once, for its fan-out and its lone chunk
	if p.Token == "" && !p.Rule().Targeted {
		if rs, err = s.fanouts.Recipients(ctx, p.ID); err != nil {
			return err
		}
	}
	for {
		f, started, err := s.page(ctx, app, p, rs, from, args.Sends)
		if err != nil || !started {
			return err // on not started: another run moved the fan-out on, or the push ended
		}
		if !f.More {
			s.logFanout(p, f.To)
			if attempt == 0 || !lone(p, f.To, args.Sends) {
				return nil
			}
			now := s.cfg.Now() // the push's start, as near as the run knows it (StartSending wrote it)
			p.Status, p.StartedAt = herald.StatusSending, &now
			return s.sendChunk(ctx, sending{push: p, app: app, recipients: rs}, SendArgs{PushID: p.ID}, attempt, false)
		}
		if p.Spread() && p.StartedAt == nil { // the page started it: its later pages' chunks are due from the start recorded
			if p, err = s.fanouts.PushRecord(ctx, p.ID); err != nil {
				return err
			}
		}
		if from = f.To; !yieldAt.IsZero() && time.Now().After(yieldAt) {
			return river.JobSnooze(0)
		}
	}
}

// page plans the next page of a push's fan-out (fanoutPage) and records
// it (StartSending), holding one of the pages' places meanwhile. A page
// is a push's heaviest step (its devices read, its chunk planned and
// written), and a burst of accepts starts as many fan-outs at once as
// there are workers: pages run one per core at a time, so that the
// requests accepting pushes meanwhile keep their share of the cores and
// of the writer, while the sends of the pages done go on.
func (s *Service) page(ctx context.Context, app herald.App, p herald.Push, rs []herald.Recipient, from sendstore.FanoutCursor, sends bool) (sendstore.Fanout, bool, error) {
	select {
	case s.pages <- struct{}{}:
	case <-ctx.Done():
		return sendstore.Fanout{}, false, ctx.Err()
	}
	defer func() { <-s.pages }()
	f, err := s.fanoutPage(ctx, app, p, rs, from, s.nightRuleFor(p, app, from), sends)
	if err != nil {
		return f, false, err
	}
	started, err := s.fanouts.StartSending(ctx, p.ID, f)
	return f, started, err
}

// lone reports a push whose fan-out (to where cursor stands) made one
// chunk that its fan-out job sends itself: an immediate push that names
// its users or its token, so its fan-out is one page recorded by its job
// alone (the watch runs scheduled and stalled fan-outs), not deferred to
// the morning. It is a function of what is stored, so every run of the
// job, and the page's record (which then inserts no send job), agree;
// sends is the job's FanoutArgs.Sends, so that a job queued by a binary
// that did not send lone chunks (its page recorded with a send job) is
// left to that send job.
func lone(p herald.Push, cursor sendstore.FanoutCursor, sends bool) bool {
	return sends && mayBeLone(p) && cursor.Chunk == 1
}

// mayBeLone reports a push whose fan-out sends its chunk itself when it
// makes one (see lone).
func mayBeLone(p herald.Push) bool {
	return (p.Token != "" || !p.Rule().Targeted) && p.ScheduledAt == nil && p.NightPolicy != herald.NightDefer && !p.Spread()
}

// fanoutPage plans the next page of a push's fan-out: every device of the
// users a push names (rs), the device holding a token push's token, or
// the next page of a topic's or the app's devices. sends is the job's
// FanoutArgs.Sends (see lone).
func (s *Service) fanoutPage(ctx context.Context, app herald.App, p herald.Push, rs []herald.Recipient, from sendstore.FanoutCursor, rule nightRule, sends bool) (sendstore.Fanout, error) {
	f := sendstore.Fanout{From: from, To: from, Finish: FinishArgs{PushID: p.ID}}
	var groups []recipientDevices
	switch {
	case p.Token != "": // a token push, or a consent notice to a device
		g, err := s.tokenDevice(ctx, p)
		if err != nil {
			return f, err
		}
		groups = g
	case p.Rule().Targeted:
		sel, err := selection(p)
		if err != nil {
			return f, err
		}
		if p.Spread() && from.Start() {
			if f.SpreadUsers, err = s.fanouts.CountSelected(ctx, p.AppID, sel); err != nil {
				return f, err
			}
		}
		list, after, err := s.fanouts.DevicePage(ctx, p.AppID, sel, from.After, s.cfg.FanoutPage)
		if err != nil {
			return f, err
		}
		f.To.After, f.More = after, len(list) == s.cfg.FanoutPage
		groups, f.To.Users = groupDevices(list, from)
		f.Charge = app.PushCharge(p, f.To.Users-from.Users, s.cfg.Now())
	default:
		devices, err := s.fanouts.DevicesOfUsers(ctx, p.AppID, userIDs(rs))
		if err != nil {
			return f, err
		}
		for idx, r := range rs {
			groups = append(groups, recipientDevices{r: r, idx: idx, devices: devices[r.UserID]})
		}
		if p.Spread() {
			f.SpreadUsers = len(rs)
		}
	}
	f.Deliveries, f.Deferred, f.LateLocal = plan(p, groups, rule, s.cfg.ChunkSize, &f.To)
	if !lone(p, f.To, sends) { // a lone chunk is sent by the fan-out's job
		for c := from.Chunk; c < f.To.Chunk; c++ {
			f.Jobs = append(f.Jobs, SendArgs{PushID: p.ID, Chunk: c, High: p.High()})
		}
	}
	s.deferJobs(&f)
	s.spreadJobs(&f, p)
	return f, nil
}

// selection is which devices a targeted push goes to: its topic's, its
// filter's (a segment push), or every device of the app. A filter is
// judged at the push's time, its scheduled time or its accept, the same
// for every page and every run of its fan-out.
func selection(p herald.Push) (sendstore.Selection, error) {
	sel := sendstore.Selection{Topic: p.Topic}
	if p.Kind != herald.KindSegment {
		return sel, nil
	}
	var f audience.Filter
	if err := json.Unmarshal(p.Filter, &f); err != nil {
		return sel, fmt.Errorf("push %s: its filter: %w", p.ID, err)
	}
	sel.Filter, sel.Now = &f, p.CreatedAt
	if p.ScheduledAt != nil {
		sel.Now = *p.ScheduledAt
	}
	return sel, nil
}

// tokenDevice returns the one group of a token push: the device that holds
// the token now, under its user ("" when unmapped), or none when no device
// holds it. A test push is not charged, so the users it reaches are not
// counted on the cursor.
func (s *Service) tokenDevice(ctx context.Context, p herald.Push) ([]recipientDevices, error) {
	d, err := s.fanouts.DeviceByToken(ctx, p.AppID, p.Token)
	switch {
	case errors.Is(err, herald.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	var r herald.Recipient
	if d.UserID != nil {
		r.UserID = *d.UserID
	}
	return []recipientDevices{{r: r, devices: []herald.Device{d}}}, nil
}

// recipientDevices is a recipient, its index, and its devices now.
type recipientDevices struct {
	r       herald.Recipient
	idx     int
	devices []herald.Device
}

// groupDevices groups a page of a topic's or an app's devices by user (a
// user's devices follow each other, see sendstore.DeviceCursor) and returns
// the groups and the users targeted so far: each user once, even when its
// devices began on the page before, and each device no user is mapped to.
func groupDevices(list []herald.Device, from sendstore.FanoutCursor) ([]recipientDevices, int) {
	var groups []recipientDevices
	users := from.Users
	last := "" // the user of the group before, "" for none or unmapped
	if from.After.Mapped {
		last = from.After.UserID
	}
	for _, d := range list {
		switch {
		case d.UserID == nil:
			groups = append(groups, recipientDevices{idx: users, devices: []herald.Device{d}})
			users, last = users+1, ""
		case *d.UserID == last && len(groups) > 0:
			g := &groups[len(groups)-1]
			g.devices = append(g.devices, d)
		case *d.UserID == last: // the user's devices began on the page before
			groups = append(groups, recipientDevices{r: herald.Recipient{UserID: last}, idx: users - 1, devices: []herald.Device{d}})
		default:
			last = *d.UserID
			groups = append(groups, recipientDevices{r: herald.Recipient{UserID: last}, idx: users, devices: []herald.Device{d}})
			users++
		}
	}
	return groups, users
}

// logFanout logs the end of a push's fan-out with the counts its cursor
// holds; the push's end logs the rest.
func (s *Service) logFanout(p herald.Push, to sendstore.FanoutCursor) {
	msg := "push fanned out"
	if p.ScheduledAt != nil {
		msg = "scheduled push fired"
	}
	users := p.RequestedUsers
	if p.Rule().CountsUsers {
		users = to.Users
	}
	s.cfg.Logger.Info(msg, "app", p.AppID, "push", p.ID, "kind", p.Kind, "users", users, "tokens", to.Seq, "chunks", to.Chunk)
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

// plan makes one delivery per device of each recipient, numbered on from
// where to stands, which it moves past them: suppressed ones already final,
// the others pending and numbered into chunks, those deferred to the
// morning (herald.NightDefer) and a local-time push's zone parts in chunks
// of their own after the others. Consent and the night are judged for
// when each device is sent: now, or its zone's time for a zone part
// (whose devices are judged again then, only the deferral to the
// morning decided now). It returns
// the deliveries, the waiting chunks, and how many devices of a
// local-time push are sent at once late (counts.lateLocal).
func plan(p herald.Push, groups []recipientDevices, rule nightRule, chunkSize int, to *sendstore.FanoutCursor) ([]herald.Delivery, []sendstore.DeferredChunk, int) {
	var ds []herald.Delivery
	var later deferral
	open, lateLocal := 0, 0
	languages := len(p.Localized) > 0
	for _, g := range groups {
		marketing, image := p.MarketingFor(g.r), p.ContentFor(g.r).ImageURL != ""
		sent, firstDeferred := 0, -1
		for _, d := range g.devices {
			del := herald.Delivery{
				Seq: to.Seq + len(ds), RecipientIdx: g.idx, UserID: g.r.UserID, DeviceID: d.ID, Token: d.Token, Platform: d.Platform,
				AppSourceVersion: d.AppSourceVersion, TokenUpdatedAt: d.TokenUpdatedAt, State: herald.DeliveryPending,
				OldForBadge: p.Badge && herald.VersionBelow(d.AppSourceVersion, herald.BadgeSince),
				OldForImage: image && herald.VersionBelow(d.AppSourceVersion, herald.ImageSince),
			}
			if languages {
				del.Locale = d.Locale
			}
			at, waits, late := rule.sendAt(d)
			switch night := herald.JudgeNight(marketing, d.Consent, rule.night(d, at), p.NightPolicy); {
			case night == herald.DeferToMorning:
				if k := later.add(len(ds), rule.morning(d, at), false); firstDeferred < 0 {
					firstDeferred = k
				}
			case waits: // a zone part: consent and the night are judged again when it is sent
				later.add(len(ds), at, true)
				sent++
			case night == herald.SuppressConsent:
				del.State = herald.DeliverySuppressedConsent
			case night == herald.SuppressNight:
				del.State = herald.DeliverySuppressedNight
			default:
				if late {
					lateLocal++
				}
				del.Chunk = to.Chunk + open/chunkSize
				open++
				sent++
			}
			ds = append(ds, del)
		}
		later.group(rule, g, sent, firstDeferred)
	}
	to.Seq += len(ds)
	to.Chunk += (open + chunkSize - 1) / chunkSize
	return ds, later.number(p, ds, chunkSize, to), lateLocal
}
