package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

// The concurrent subtests release writers together at one store. They hold
// on SQLite because it takes one writer at a time; on an engine with
// concurrent writers they hold only when each transition is a guarded write.
var concurrentTests = []test{
	{"OneFinishPerPush/CompleteChunk", testConcurrentCompleteChunk},
	{"OneFinishPerPush/FinishPush", testConcurrentFinishPush},
	{"OnePushPerIdempotencyKey", testConcurrentIdempotency},
	{"OneFanoutPerPush", testConcurrentStartSending},
	{"OneStepPerChunkCursor", testConcurrentAdvanceChunk},
	{"OneRecoveryPerChunk", testConcurrentResumeChunk},
	{"OneRefundPerCancel", testConcurrentCancel},
	{"CancelOrFire", testConcurrentCancelOrFire},
	{"EditsAndCancels", testConcurrentEditCancel},
	{"ConsentUpdates", testConcurrentConsent},
	{"ConsentNoLostUpdate", testConcurrentConsentLostUpdate},
	{"TokenMovedBetweenDevices", testConcurrentTokenMove},
	{"WithdrawOrRegister", testConcurrentWithdrawOrRegister},
	{"NewUserFromManyDevices", testConcurrentNewUser},
	{"RegistrationFailsAlone", testConcurrentRegisterFailsAlone},
}

// writers is how many goroutines each concurrent subtest releases at once.
const writers = 8

// errs collects the unexpected errors of goroutines for the test to report.
type errs struct {
	mu   sync.Mutex
	list []error
}

func (e *errs) add(err error) {
	if err != nil {
		e.mu.Lock()
		e.list = append(e.list, err)
		e.mu.Unlock()
	}
}

func (e *errs) report(t *testing.T, what string) {
	t.Helper()
	for _, err := range e.list {
		t.Errorf("%s: %v", what, err)
	}
}

func testConcurrentCompleteChunk(t *testing.T, b *bundle) {
	p, _ := b.sending(writers, 1)
	var failed errs
	var left atomic.Int32
	// Every chunk is completed twice, all at once: each counted once, so
	// the push is left to finish (by one completion at least: a second
	// one of a chunk that comes after the last may be told too, and
	// FinishPush records once, see testConcurrentFinishPush), and not
	// before every chunk is done.
	concurrently(2*writers, func(i int) {
		ok, err := b.s.CompleteChunk(b.ctx, p.ID, i%writers)
		failed.add(err)
		if ok {
			left.Add(1)
		}
	})
	failed.report(t, "CompleteChunk")
	if left.Load() == 0 {
		t.Errorf("left to finish: got no completion told, want at least one")
	}
	// Told only while no chunk is open, not one more or less: each
	// chunk was counted once.
	b.complete(p.ID, 0, true)
	b.wantJobs(finishJob(p.ID).Kind(), 0)
}

func testConcurrentFinishPush(t *testing.T, b *bundle) {
	p, _ := b.sending(2, 10)
	var finished atomic.Int32
	var failed errs
	concurrently(writers, func(i int) {
		ok, err := b.s.FinishPush(b.ctx, p.ID, []herald.Unreachable{{UserID: "u" + itoa(i), Reason: herald.ReasonNoToken}},
			[]herald.Job{webhookJob(p.ID, 0)})
		failed.add(err)
		if ok {
			finished.Add(1)
		}
	})
	failed.report(t, "FinishPush")
	if n := finished.Load(); n != 1 {
		t.Errorf("finished: got %d true, want exactly 1", n)
	}
	b.wantJobs(webhookJob(p.ID, 0).Kind(), 1)
	if us, _ := b.s.UnreachableUsersOf(b.ctx, p.ID); len(us) != 1 {
		t.Errorf("unreachable: got %v, want the one finish's list", us)
	}
}

func testConcurrentIdempotency(t *testing.T, b *bundle) {
	pushes := make([]herald.Push, writers)
	for i := range pushes {
		pushes[i], _ = b.newPush("u1")
	}
	ids := make([]string, writers)
	replays := make([]bool, writers)
	var failed errs
	concurrently(writers, func(i int) {
		key := idem
		id, replayed, err := b.s.AcceptPush(b.ctx, pushes[i], []herald.Recipient{{UserID: "u1"}}, &key, fanoutJob(pushes[i].ID))
		failed.add(err)
		ids[i], replays[i] = id, replayed
	})
	failed.report(t, "AcceptPush")
	stored := ""
	for i, id := range ids {
		if !replays[i] {
			if stored != "" {
				t.Errorf("stored twice: %s and %s", stored, id)
			}
			stored = id
		}
	}
	for i, id := range ids {
		if id != stored {
			t.Errorf("request %d: got id %s, want the stored push %s", i, id, stored)
		}
	}
	if n := b.pushCount(); n != 1 {
		t.Errorf("pushes: got %d, want 1", n)
	}
	jobs := 0
	for _, p := range pushes {
		jobs += len(b.jobs(fanoutJob(p.ID).Kind()))
	}
	if jobs != 1 {
		t.Errorf("fan-out jobs: got %d, want 1", jobs)
	}
	if half := b.usageOn(b.app.ID, today); half != 1 {
		t.Errorf("usage: got %d, want 1 (charged once)", half)
	}
}

func testConcurrentStartSending(t *testing.T, b *bundle) {
	var devices []herald.Device
	for i := range 4 {
		n := itoa(i + 1)
		devices = append(devices, b.register("d"+n, "t"+n, "u"+n))
	}
	p := b.acceptUsers("u1", "u2", "u3", "u4")
	f := fanout(p.ID, plan(devices, 2))
	var started atomic.Int32
	var failed errs
	concurrently(writers, func(int) {
		ok, err := b.s.StartSending(b.ctx, p.ID, f)
		failed.add(err)
		if ok {
			started.Add(1)
		}
	})
	failed.report(t, "StartSending")
	if n := started.Load(); n != 1 {
		t.Errorf("started: got %d true, want exactly 1", n)
	}
	if ds, _ := b.s.Deliveries(b.ctx, p.ID); len(ds) != 4 {
		t.Errorf("deliveries: got %d, want 4", len(ds))
	}
	b.wantJobs(sendJob(p.ID, 0).Kind(), 1)
	b.wantJobs(sendJob(p.ID, 1).Kind(), 1)
}

func testConcurrentCancel(t *testing.T, b *bundle) {
	p := b.acceptScheduled(sendAt, "u1", "u2")
	var cancelled atomic.Int32
	var failed errs
	concurrently(writers, func(int) {
		_, err := b.cancel(p.ID)
		switch {
		case err == nil:
			cancelled.Add(1)
		case !errors.Is(err, herald.ErrScheduleLocked):
			failed.add(err)
		}
	})
	failed.report(t, "CancelScheduled")
	if n := cancelled.Load(); n != 1 {
		t.Errorf("cancelled: got %d, want exactly 1", n)
	}
	if half := b.usageOn(b.app.ID, today); half != 0 {
		t.Errorf("usage: got %d, want 0 (charged once, refunded once)", half)
	}
}

// testConcurrentEditCancel: of a burst of edits and cancels of one
// scheduled push, exactly one cancel wins and refunds once; no edit is
// lost (each one taken is in the trail) and none is taken after the
// cancel's.
func testConcurrentEditCancel(t *testing.T, b *bundle) {
	p := b.acceptScheduled(sendAt, "u1", "u2")
	var cancels, edits atomic.Int32
	var failed errs
	concurrently(2*writers, func(i int) {
		var err error
		if i%2 == 0 {
			_, err = b.cancel(p.ID)
			if err == nil {
				cancels.Add(1)
			}
		} else {
			moved := sendAt.Add(time.Duration(i) * time.Minute)
			_, err = b.edit(p.ID, herald.PushChange{Title: new("edit " + itoa(i)), ScheduledAt: &moved})
			if err == nil {
				edits.Add(1)
			}
		}
		if err != nil && !errors.Is(err, herald.ErrScheduleLocked) {
			failed.add(err)
		}
	})
	failed.report(t, "edit or cancel")
	if n := cancels.Load(); n != 1 {
		t.Errorf("cancelled: got %d, want exactly 1", n)
	}
	rec := b.pushOf(p.ID)
	if rec.Status != herald.StatusCancelled || len(rec.Edits) != int(edits.Load()) {
		t.Errorf("got %s with %d edits in the trail, want cancelled with the %d edits taken", rec.Status, len(rec.Edits), edits.Load())
	}
	if half := b.usageOn(b.app.ID, today); half != 0 {
		t.Errorf("usage: got %d, want 0 (charged once, refunded once)", half)
	}
	live := 0
	for _, st := range b.jobs(fanoutJob(p.ID).Kind()) {
		if st != "cancelled" {
			live++
		}
	}
	if live != 0 {
		t.Errorf("fan-out jobs: %d left, want every one cancelled", live)
	}
}

func testConcurrentCancelOrFire(t *testing.T, b *bundle) {
	d := b.register("d1", "t1", "u1")
	pushes := make([]herald.Push, writers)
	for i := range pushes {
		pushes[i] = b.acceptScheduled(sendAt, "u1")
	}
	cancelled := make([]bool, writers)
	started := make([]bool, writers)
	var failed errs
	concurrently(2*writers, func(i int) {
		p := pushes[i/2]
		if i%2 == 0 {
			_, err := b.cancel(p.ID)
			cancelled[i/2] = err == nil
			if err != nil && !errors.Is(err, herald.ErrScheduleLocked) {
				failed.add(err)
			}
			return
		}
		ok, err := b.s.StartSending(b.ctx, p.ID, fanout(p.ID, plan([]herald.Device{d}, 10)))
		started[i/2] = ok
		failed.add(err)
	})
	failed.report(t, "CancelScheduled or StartSending")
	refunds := 0
	for i, p := range pushes {
		rec := b.pushOf(p.ID)
		switch {
		case cancelled[i] == started[i]:
			t.Errorf("push %d: cancelled %v and started %v, want exactly one", i, cancelled[i], started[i])
		case cancelled[i] && (rec.Status != herald.StatusCancelled || rec.Counts.Tokens != 0):
			t.Errorf("push %d: cancelled, but got %s with %d deliveries", i, rec.Status, rec.Counts.Tokens)
		case started[i] && rec.Status != herald.StatusSending:
			t.Errorf("push %d: started, but got %s", i, rec.Status)
		}
		if cancelled[i] {
			refunds++
		}
	}
	if half := b.usageOn(b.app.ID, today); half != int64(writers-refunds) {
		t.Errorf("usage: got %d, want %d (one per push not cancelled)", half, writers-refunds)
	}
}

// consentChanges are the changes the consent subtest applies, valid or not
// depending on the pair they meet.
var consentChanges = []herald.ConsentChange{
	change(new(true), new(true)), change(new(false), nil), change(new(true), nil), change(nil, new(true)), change(nil, new(false)),
}

func testConcurrentConsent(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	_, err := b.s.SetUserConsent(b.ctx, b.app.ID, "u1", change(new(true), nil))
	must(t, "SetUserConsent", err)
	var newcomers []string
	for i := range writers {
		id := "n" + itoa(i)
		b.register(id, "tn"+itoa(i), "")
		newcomers = append(newcomers, id)
	}
	var failed errs
	concurrently(3*writers, func(i int) {
		c := consentChanges[i%len(consentChanges)]
		var err error
		switch i % 3 {
		case 0:
			_, err = b.s.SetUserConsent(b.ctx, b.app.ID, "u1", c)
		case 1:
			_, err = b.s.SetDeviceConsent(b.ctx, b.app.ID, "d1", c)
		case 2:
			_, err = b.s.SetDeviceUser(b.ctx, b.app.ID, newcomers[i/3], new("u1"))
		}
		if !errors.Is(err, herald.ErrInvalidRequest) {
			failed.add(err)
		}
	})
	failed.report(t, "consent writers")
	u, ds := b.user("u1")
	if u.Consent.MarketingNight && !u.Consent.Marketing {
		t.Errorf("user: got %+v, night on with marketing off", u.Consent)
	}
	for _, d := range ds {
		if d.Consent.MarketingNight && !d.Consent.Marketing {
			t.Errorf("device %s: got %+v, night on with marketing off", d.ID, d.Consent)
		}
		// A newcomer adopted the pair when mapped, or had it written by a
		// later change of the user: either way it holds the user's pair.
		if d.ID != "d1" && d.Consent != u.Consent {
			t.Errorf("newly mapped device %s: got %+v, want the user's %+v", d.ID, d.Consent, u.Consent)
		}
	}
	if len(ds) != writers+1 {
		t.Errorf("devices of u1: got %d, want %d", len(ds), writers+1)
	}
}

// testConcurrentConsentLostUpdate races "marketing off" (shape B) against
// "night on" (shape C) on a user whose marketing is on. Night on after
// marketing off is refused, so when both succeed the night change came
// first and the pair must end off/off. A write from a stale read (night on
// over marketing on, after marketing went off) would bring marketing back.
func testConcurrentConsentLostUpdate(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	for round := range 20 {
		_, err := b.s.SetUserConsent(b.ctx, b.app.ID, "u1", change(new(true), new(false)))
		must(t, "SetUserConsent", err)
		results := make([]error, 2)
		concurrently(2, func(i int) {
			c := change(new(false), nil)
			if i == 1 {
				c = change(nil, new(true))
			}
			_, results[i] = b.s.SetUserConsent(b.ctx, b.app.ID, "u1", c)
		})
		u, _ := b.user("u1")
		if results[0] == nil && results[1] == nil && u.Consent != consent(false, false) {
			t.Fatalf("round %d: both changes succeeded but the pair is %+v, want off/off (a lost update)", round, u.Consent)
		}
		if results[0] != nil {
			t.Fatalf("round %d: marketing off: %v", round, results[0])
		}
	}
}

func testConcurrentTokenMove(t *testing.T, b *bundle) {
	// Pairs of devices race for one token: the even pairs exist already,
	// the odd ones are new.
	for i := 0; i < writers; i += 2 {
		b.register("a"+itoa(i), "old-a"+itoa(i), "ua")
		b.register("b"+itoa(i), "old-b"+itoa(i), "ub")
	}
	var failed errs
	concurrently(2*writers, func(i int) {
		pair, side := i/2, "a"
		if i%2 == 1 {
			side = "b"
		}
		_, err := b.s.RegisterDevice(b.ctx, b.app.ID, registration(side+itoa(pair), "shared"+itoa(pair), "u"+side))
		failed.add(err)
	})
	failed.report(t, "RegisterDevice")
	all, err := b.allDevices(b.app.ID)
	must(t, "AllDevices", err)
	holders := map[string][]string{}
	for _, d := range all {
		holders[d.Token] = append(holders[d.Token], d.ID)
	}
	for pair := range writers {
		token := "shared" + itoa(pair)
		if h := holders[token]; len(h) != 1 || h[0] != "a"+itoa(pair) && h[0] != "b"+itoa(pair) {
			t.Errorf("%s: held by %v, want exactly one of its two devices", token, h)
		}
	}
}

func testConcurrentWithdrawOrRegister(t *testing.T, b *bundle) {
	for i := range writers {
		b.register("d"+itoa(i), "t"+itoa(i), "u"+itoa(i))
	}
	var failed errs
	concurrently(2*writers, func(i int) {
		user := "u" + itoa(i/2)
		if i%2 == 0 {
			if err := b.s.WithdrawUser(b.ctx, b.app.ID, user); !errors.Is(err, herald.ErrUserWithdrawn) {
				failed.add(err)
			}
			return
		}
		_, err := b.s.RegisterDevice(b.ctx, b.app.ID, registration("new"+itoa(i/2), "tnew"+itoa(i/2), user))
		failed.add(err)
	})
	failed.report(t, "WithdrawUser or RegisterDevice")
	for i := range writers {
		u, ds := b.user("u" + itoa(i))
		switch u.State {
		case herald.UserWithdrawn:
			if len(ds) != 0 {
				t.Errorf("u%d: withdrawn with devices %v mapped", i, deviceIDs(ds))
			}
		case herald.UserRegistered:
			if !equal(deviceIDs(ds), []string{"new" + itoa(i)}) {
				t.Errorf("u%d: registered again with %v, want the new device only", i, deviceIDs(ds))
			}
		}
	}
}

func testConcurrentNewUser(t *testing.T, b *bundle) {
	b.tick(time.Second)
	var failed errs
	concurrently(writers, func(i int) {
		_, err := b.s.RegisterDevice(b.ctx, b.app.ID, registration("d"+itoa(i), "t"+itoa(i), "u1"))
		failed.add(err)
	})
	failed.report(t, "RegisterDevice")
	if u, ds := b.user("u1"); u.State != herald.UserRegistered || len(ds) != writers {
		t.Errorf("got %+v with %d devices, want registered with %d", u, len(ds), writers)
	}
}

// testConcurrentRegisterFailsAlone: registrations at once (sharing commits
// where the engine batches them), every other one to an app that does not
// exist: those fail with ErrNotFound and write nothing, the others are
// registered.
func testConcurrentRegisterFailsAlone(t *testing.T, b *bundle) {
	var failed errs
	concurrently(4*writers, func(i int) {
		app, user := b.app.ID, "u"+itoa(i)
		if i%2 == 1 {
			app = "app_missing"
		}
		_, err := b.s.RegisterDevice(b.ctx, app, registration("d"+itoa(i), "t"+itoa(i), user))
		if i%2 == 1 {
			if !errors.Is(err, herald.ErrNotFound) {
				failed.add(fmt.Errorf("d%d, of no app: got %v, want %v", i, err, herald.ErrNotFound))
			}
			return
		}
		failed.add(err)
	})
	failed.report(t, "RegisterDevice")
	all, err := b.allDevices(b.app.ID)
	must(t, "AllDevices", err)
	var got []string
	for _, d := range all {
		got = append(got, d.ID)
	}
	var want []string
	for i := 0; i < 4*writers; i += 2 {
		want = append(want, "d"+itoa(i))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !equal(got, want) {
		t.Errorf("devices registered: got %v, want %v", got, want)
	}
	for i := 1; i < 4*writers; i += 2 {
		if u, _, err := b.s.User(b.ctx, "app_missing", "u"+itoa(i)); !errors.Is(err, herald.ErrUserNotFound) {
			t.Errorf("u%d of no app: got %+v (%v), want ErrUserNotFound", i, u, err)
		}
	}
}
