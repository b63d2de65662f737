package delivery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sqlite"
	"github.com/heraldpush/herald/sqlite/sqlitetest"
)

// hookStub is the webhook receiver's side of the network: it answers each
// consent.changed event with err and notes which records it was given.
type hookStub struct {
	err  error
	sent []int64
}

func (h *hookStub) Report(context.Context, string, string, herald.UndeliverableReport) error {
	return nil
}

func (h *hookStub) ConsentChanged(_ context.Context, _, _ string, r herald.ConsentRecord) error {
	h.sent = append(h.sent, r.Seq)
	return h.err
}

func (h *hookStub) ApprovalRequested(context.Context, string, string, herald.ApprovalRequest) error {
	return nil
}

// consentBundle is a store on SQLite with an app that has a webhook and a
// user with two pending events (records 1 and 3; 2 and 4 are its device's).
type consentBundle struct {
	db    *sqlite.DB
	hooks *hookStub
	w     *consentWorker
	appID string
}

func newConsentBundle(t *testing.T) *consentBundle {
	t.Helper()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	mk, err := herald.ParseMasterKey(herald.NewMasterKeyText())
	if err != nil {
		t.Fatal(err)
	}
	app := herald.App{ID: "app_consent", Name: "a", APIKey: herald.NewAPIKey(), SecretHash: []byte("h"), Tier: herald.TierBusiness,
		Registered: true, TimeZone: herald.DefaultTimeZone}
	if err := db.CreateApp(ctx, app); err != nil {
		t.Fatal(err)
	}
	if err := db.SetWebhook(ctx, app.ID, "https://hooks.example.com/h", mk.Seal([]byte("whsec_c2VjcmV0"))); err != nil {
		t.Fatal(err)
	}
	user := "u1"
	if _, err := db.RegisterDevice(ctx, app.ID, herald.DeviceRegistration{DeviceID: "d1", Token: "t1", Platform: herald.PlatformAndroid,
		AppSourceVersion: "1.6.0", UserID: &user}); err != nil {
		t.Fatal(err)
	}
	for _, on := range []bool{true, false} {
		if _, err := db.SetUserConsent(ctx, app.ID, user, herald.ConsentChange{Marketing: &on}); err != nil {
			t.Fatal(err)
		}
	}
	hooks := &hookStub{}
	s := New(Config{Store: db, Webhooks: hooks, MasterKey: mk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return &consentBundle{db: db, hooks: hooks, w: &consentWorker{s: s}, appID: app.ID}
}

// work runs the job of the user's record seq as attempt number attempt.
func (b *consentBundle) work(seq int64, attempt int) error {
	return b.w.Work(context.Background(), &river.Job[herald.ConsentEventJob]{
		JobRow: &rivertype.JobRow{Attempt: attempt, MaxAttempts: 25},
		Args:   herald.ConsentEventJob{AppID: b.appID, UserID: "u1", Seq: seq},
	})
}

// state returns the event state of record seq and how many event jobs the
// store has queued so far.
func (b *consentBundle) state(t *testing.T, seq int64) (herald.ConsentEventState, int) {
	t.Helper()
	_, st, err := b.db.ConsentEvent(context.Background(), b.appID, "u1", seq)
	if err != nil {
		t.Fatal(err)
	}
	var jobs int
	if err := b.db.Reader.QueryRow(`SELECT COUNT(*) FROM river_job WHERE kind = ?`, herald.ConsentEventJob{}.Kind()).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	return st, jobs
}

func isCancel(err error) bool {
	var c *river.JobCancelError
	return errors.As(err, &c)
}

// TestConsentWorker: a failed event is retried while the schedule allows,
// then dropped, which queues the user's next event; an event that cannot
// be sent (ErrNoRetry) is dropped at once; a sent one queues the next.
func TestConsentWorker(t *testing.T) {
	t.Parallel()
	t.Run("RetriedThenGivenUp", func(t *testing.T) {
		b := newConsentBundle(t)
		b.hooks.err = errors.New("receiver answered 500")
		for attempt := 1; attempt < herald.WebhookAttempts; attempt++ {
			if err := b.work(1, attempt); err == nil || isCancel(err) {
				t.Fatalf("attempt %d: got %v, want an error to retry", attempt, err)
			}
			if st, jobs := b.state(t, 1); st != herald.EventPending || jobs != 1 {
				t.Fatalf("after attempt %d: got %q and %d jobs, want pending and the first job alone", attempt, st, jobs)
			}
		}
		if err := b.work(1, herald.WebhookAttempts); !isCancel(err) {
			t.Errorf("last attempt: got %v, want the job cancelled", err)
		}
		if st, jobs := b.state(t, 1); st != herald.EventDropped || jobs != 2 {
			t.Errorf("after the last attempt: got %q and %d jobs, want dropped and the next event's job queued", st, jobs)
		}
	})
	t.Run("NoRetry", func(t *testing.T) {
		b := newConsentBundle(t)
		b.hooks.err = fmt.Errorf("webhook: invalid url (%w)", herald.ErrNoRetry)
		if err := b.work(1, 1); !isCancel(err) {
			t.Errorf("got %v, want the job cancelled", err)
		}
		if st, jobs := b.state(t, 1); st != herald.EventDropped || jobs != 2 {
			t.Errorf("got %q and %d jobs, want dropped and the next queued", st, jobs)
		}
	})
	t.Run("WebhookRemoved", func(t *testing.T) {
		b := newConsentBundle(t)
		if err := b.db.SetWebhook(context.Background(), b.appID, "", nil); err != nil {
			t.Fatal(err)
		}
		if err := b.work(1, 1); err != nil || len(b.hooks.sent) != 0 {
			t.Fatalf("got %v and %v sent, want nil and nothing sent", err, b.hooks.sent)
		}
		if st, jobs := b.state(t, 1); st != herald.EventDropped || jobs != 2 {
			t.Errorf("got %q and %d jobs, want dropped and the next queued (to be dropped in turn)", st, jobs)
		}
	})
	t.Run("SentThenNext", func(t *testing.T) {
		b := newConsentBundle(t)
		for _, seq := range []int64{1, 3} {
			if err := b.work(seq, 1); err != nil {
				t.Fatalf("event %d: got %v, want nil", seq, err)
			}
		}
		if err := b.work(1, 2); err != nil { // a repeat after a crash: nothing more
			t.Fatalf("repeat of event 1: got %v, want nil", err)
		}
		st1, _ := b.state(t, 1)
		st3, jobs := b.state(t, 3)
		if st1 != herald.EventSent || st3 != herald.EventSent || jobs != 2 || fmt.Sprint(b.hooks.sent) != "[1 3]" {
			t.Errorf("got %q, %q, %d jobs, sent %v; want both sent once, in order, two jobs", st1, st3, jobs, b.hooks.sent)
		}
	})
}
