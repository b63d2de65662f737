package delivery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald"
)

// noticeWorker makes the result notice of one consent decision (Network
// Act art. 50(7)): a push of kind consent-notice to the user's devices, or
// to the device itself when no user is mapped to it. The push's id comes
// from the record, so a run that dies after accepting it finds it again
// rather than making a second one.
type noticeWorker struct {
	river.WorkerDefaults[herald.ConsentNoticeJob]
	s *Service
}

// Work accepts the notice's push, unless an earlier run did.
func (w *noticeWorker) Work(ctx context.Context, job *river.Job[herald.ConsentNoticeJob]) error {
	s, a := w.s, job.Args
	rec, err := s.cfg.Store.ConsentRecord(ctx, a.AppID, a.RecordID)
	if err != nil {
		return gone(err)
	}
	id := herald.DerivedID("push_", rec.At, fmt.Sprintf("consent-notice/%s/%d", a.AppID, a.RecordID))
	if _, err := s.cfg.Store.PushRecord(ctx, id); !errors.Is(err, herald.ErrNotFound) {
		return err // nil: made already
	}
	app, err := s.cfg.Store.App(ctx, a.AppID)
	if err != nil {
		return gone(err)
	}
	var token string
	switch {
	case rec.UserID != nil:
	case rec.DeviceID != nil:
		devices, err := s.cfg.Store.DevicesByID(ctx, app.ID, []string{*rec.DeviceID})
		if err != nil {
			return err
		}
		d, ok := devices[*rec.DeviceID]
		if !ok {
			return nil // the device is gone: no one to tell
		}
		token = d.Token
	default:
		return nil
	}
	p, rs := herald.NewConsentNotice(app, id, rec, token, s.cfg.Now())
	_, _, err = s.Accept(ctx, p, rs, nil)
	return err
}

// ReconfirmationHour is when, in the app's time zone, the daily
// re-confirmation run is made.
const ReconfirmationHour = 10

// Reconfirm sends one re-confirmation notice (art. 50(8)) to each user
// with marketing consent due within the app's lead days who has a device,
// in one push of kind consent-reconfirmation, and returns how many users
// it names and its id ("" when nobody was due). The push is stored under
// the app's claim (ClaimReconfirmation), so of runs made at once (daily,
// manual, on any node) one names a due user and the others find its
// notice on its way: they name nobody. day is the daily run's date,
// claimed once across nodes (claimed false when it was made already); ""
// for a run the operator asked for.
func (s *Service) Reconfirm(ctx context.Context, app herald.App, day string) (notified int, pushID string, claimed bool, err error) {
	now := s.cfg.Now()
	rs, err := s.dueRecipients(ctx, app, now)
	if err != nil {
		return 0, "", false, err
	}
	var p *herald.Push
	if len(rs) > 0 {
		rp := herald.NewReconfirmation(app, rs, now)
		p = &rp
		pushID = p.ID
	}
	notified, claimed, err = s.cfg.Store.ClaimReconfirmation(ctx, app.ID, day, app.Reconfirmation.DueBy(now), p, rs, FanoutArgs{PushID: pushID})
	if err != nil || notified == 0 {
		return 0, "", claimed, err
	}
	return notified, pushID, claimed, nil
}

// duePage is how many due users Reconfirm reads at a time.
const duePage = 1000

// dueRecipients returns the users due within the lead days that have a
// device and no notice on its way, each with its notice.
func (s *Service) dueRecipients(ctx context.Context, app herald.App, now time.Time) ([]herald.Recipient, error) {
	until := app.Reconfirmation.DueBy(now)
	pending, err := s.cfg.Store.ReconfirmingUsers(ctx, app.ID)
	if err != nil {
		return nil, err
	}
	var rs []herald.Recipient
	for cursor, first := "", true; first || cursor != ""; first = false {
		due, next, err := s.cfg.Store.ConsentDue(ctx, app.ID, until, duePage, cursor)
		if err != nil {
			return nil, err
		}
		ids := make([]string, len(due))
		for i, d := range due {
			ids[i] = d.UserID
		}
		devices, err := s.cfg.Store.DevicesOfUsers(ctx, app.ID, ids)
		if err != nil {
			return nil, err
		}
		for _, d := range due {
			// A user with no device stays due; one a notice is on its way
			// to is left to it.
			if len(devices[d.UserID]) > 0 && !pending[d.UserID] {
				c := app.ReconfirmationContent(d.Consent, d.ConfirmedAt)
				rs = append(rs, herald.Recipient{UserID: d.UserID, Content: &c})
			}
		}
		cursor = next
	}
	return rs, nil
}

// DailyArgs makes the day's re-confirmation runs: River inserts it every
// minute on the leader node, and each app's run is claimed once per day,
// so a second leader (or a job run twice) makes no second run.
type DailyArgs struct{}

// Kind names the job.
func (DailyArgs) Kind() string { return "herald.reconfirmation_daily" }

type dailyWorker struct {
	river.WorkerDefaults[DailyArgs]
	s *Service
}

// Work makes the daily runs that are due.
func (w *dailyWorker) Work(ctx context.Context, _ *river.Job[DailyArgs]) error {
	return w.s.DailyReconfirmations(ctx)
}

// DailyReconfirmations makes, for each app with re-confirmation on whose
// local time is past ReconfirmationHour, that day's run unless it was made
// (on any node).
func (s *Service) DailyReconfirmations(ctx context.Context) error {
	apps, err := s.cfg.Store.ListApps(ctx)
	if err != nil {
		return err
	}
	now := s.cfg.Now()
	var errs []error
	for _, app := range apps {
		local := now.In(app.Location())
		if !app.Reconfirmation.Enabled || local.Hour() < ReconfirmationHour {
			continue
		}
		day := local.Format(time.DateOnly)
		if done, err := s.cfg.Store.ReconfirmationClaimed(ctx, app.ID, day); err != nil || done {
			errs = append(errs, err)
			continue
		}
		n, id, claimed, err := s.Reconfirm(ctx, app, day)
		if err != nil {
			errs = append(errs, fmt.Errorf("app %s: %w", app.ID, err))
			continue
		}
		if claimed {
			s.cfg.Logger.Info("re-confirmation run", "app", app.ID, "day", day, "users", n, "push", id)
		}
	}
	return errors.Join(errs...)
}

// DailyJob is the periodic job behind the daily runs.
func DailyJob() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(time.Minute), func() (river.JobArgs, *river.InsertOpts) {
		return DailyArgs{}, nil
	}, &river.PeriodicJobOpts{RunOnStart: true})
}

// ReconfirmedArgs records in the trail the users a finished
// re-confirmation push reached; its finish queues it.
type ReconfirmedArgs struct {
	PushID string `json:"pushId"`
}

// Kind names the job.
func (ReconfirmedArgs) Kind() string { return "herald.reconfirmed" }

type reconfirmedWorker struct {
	river.WorkerDefaults[ReconfirmedArgs]
	s *Service
}

// Work records the users with a delivery sent: their clocks restart. A
// user whose every delivery failed (a dead token) stays due.
func (w *reconfirmedWorker) Work(ctx context.Context, job *river.Job[ReconfirmedArgs]) error {
	s := w.s
	p, err := s.cfg.Store.PushRecord(ctx, job.Args.PushID)
	if err != nil {
		return gone(err)
	}
	ds, err := s.cfg.Store.Deliveries(ctx, p.ID)
	if err != nil {
		return err
	}
	app, err := s.cfg.Store.App(ctx, p.AppID)
	if err != nil {
		return gone(err)
	}
	var reached []string
	seen := map[string]bool{}
	for _, d := range ds {
		// A sandbox's pushes are only validated by FCM: nobody was told.
		if d.State == herald.DeliverySent && d.UserID != "" && !seen[d.UserID] && !app.Sandbox {
			seen[d.UserID] = true
			reached = append(reached, d.UserID)
		}
	}
	_, err = s.cfg.Store.RecordReconfirmed(ctx, p.AppID, p.ID, reached, s.cfg.Now())
	return gone(err)
}
