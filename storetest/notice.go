package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

var noticeTests = []test{
	{"Notice/JobWithEachDecision", testNoticeJobs},
	{"Notice/NoneWhenDisabled", testNoticeDisabled},
	{"Reconfirmation/ClaimedOncePerDay", testReconfirmationClaim},
	{"Reconfirmation/ConcurrentRunsOnePush", testReconfirmationConcurrent},
	{"Reconfirmation/RecordedOncePerPush", testReconfirmationRecorded},
	{"Import/OriginalDates", testImportDates},
	{"Import/Skips", testImportSkips},
}

// noticeJob is the kind of the job that makes a result notice.
var noticeJob = herald.ConsentNoticeJob{}.Kind()

func (b *bundle) enableNotices() {
	b.t.Helper()
	b.app.ConsentNotice = herald.ConsentNotice{Enabled: true}.WithDefaults()
	b.app.Reconfirmation = herald.Reconfirmation{Enabled: true}.WithDefaults()
	must(b.t, "UpdateApp", b.s.UpdateApp(b.ctx, b.app))
}

// testNoticeJobs: the settings are stored; each decision from the SDK, the
// Server API or the admin API (the same value again too) is recorded with
// the job of its notice, and the job names the decision's record; a device
// taking a default or its user's pair, and a withdrawal, make none.
func testNoticeJobs(t *testing.T, b *bundle) {
	b.enableNotices()
	a, err := b.s.App(b.ctx, b.app.ID)
	if err != nil || a.ConsentNotice != b.app.ConsentNotice || a.Reconfirmation != b.app.Reconfirmation {
		t.Fatalf("App: got %+v %+v, %v, want the settings stored", a.ConsentNotice, a.Reconfirmation, err)
	}
	b.setDefaultConsent(day)
	b.register("d1", "t1", "u1") // app default: no notice
	b.register("d0", "t0", "")
	b.wantJobs(noticeJob, 0)
	b.setDeviceConsent("d0", change(new(false), nil)) // an unmapped device
	b.setDeviceConsent("d1", change(nil, new(true)))
	b.setUserConsent("u1", change(new(true), new(true))) // the same again: adopted devices unchanged
	admin := change(new(false), nil)
	admin.Source = herald.SourceAdmin
	b.setUserConsent("u1", admin) // and d1 adopts it: one notice, the user's
	b.wantJobs(noticeJob, 4)
	must(t, "WithdrawUser", b.s.WithdrawUser(b.ctx, b.app.ID, "u1"))
	b.wantJobs(noticeJob, 4)
	h, err := b.s.ConsentHistory(b.ctx, b.app.ID, "u1")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range h {
		got, err := b.s.ConsentRecord(b.ctx, b.app.ID, r.ID)
		if err != nil || got.ID != r.ID || got.Source != r.Source || got.To != r.To || !got.At.Equal(r.At) {
			t.Errorf("ConsentRecord %d: got %+v, %v, want %+v", r.ID, got, err, r)
		}
	}
	if _, err := b.s.ConsentRecord(b.ctx, b.newApp("other").ID, h[0].ID); err != herald.ErrNotFound {
		t.Errorf("ConsentRecord of another app: got %v, want ErrNotFound", err)
	}
}

// testNoticeDisabled: with the notice off, decisions make no job.
func testNoticeDisabled(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	b.setDeviceConsent("d1", change(new(true), nil))
	b.setUserConsent("u1", change(new(true), nil))
	b.wantJobs(noticeJob, 0)
}

// reconfirmPush is a re-confirmation push to users, each with its own
// content.
func (b *bundle) reconfirmPush(users ...string) (herald.Push, []herald.Recipient) {
	p, rs := b.newPush(users...)
	p.Kind = herald.KindReconfirmation
	b.charge(&p, len(rs))
	for i := range rs {
		rs[i].Content = &herald.Content{Title: "t", Content: "for " + rs[i].UserID}
	}
	p.ID = herald.NewID("push_", b.now) // distinct ids for runs made at once
	return p, rs
}

// dueUsers registers users with marketing consent and moves the clock two
// years on: they are due by b.now.
func (b *bundle) dueUsers(users ...string) {
	for _, u := range users {
		b.register("d-"+u, "t-"+u, u)
		b.setUserConsent(u, change(new(true), nil))
	}
	b.tick(2 * 366 * 24 * time.Hour)
}

// testReconfirmationClaim: an app's daily run of a day is claimed once,
// with its push or without one; another day or another app claims its
// own. A run names only users still due with no notice on its way: a
// manual run after the daily one names nobody until the first push's
// reach is recorded.
func testReconfirmationClaim(t *testing.T, b *bundle) {
	b.dueUsers("u1", "u2")
	p, rs := b.reconfirmPush("u1", "ghost")
	n, claimed, err := b.s.ClaimReconfirmation(b.ctx, b.app.ID, "2025-06-11", b.now, &p, rs, fanoutJob(p.ID))
	if err != nil || !claimed || n != 1 {
		t.Fatalf("first claim: got %d %v, %v, want 1 (ghost is not due), true", n, claimed, err)
	}
	got, err := b.s.PushRecord(b.ctx, p.ID)
	if err != nil || got.Kind != herald.KindReconfirmation || got.RequestedUsers != 1 {
		t.Errorf("PushRecord: got %+v, %v, want the push stored naming 1 user", got, err)
	}
	if got, _ := b.s.Recipients(b.ctx, p.ID); len(got) != 1 || got[0].Content == nil || *got[0].Content != *rs[0].Content {
		t.Errorf("Recipients: got %+v, want u1 with its content", got)
	}
	b.wantJobs(fanoutJob(p.ID).Kind(), 1)
	if users, err := b.s.ReconfirmingUsers(b.ctx, b.app.ID); err != nil || len(users) != 1 || !users["u1"] {
		t.Errorf("ReconfirmingUsers: got %v, %v, want u1 (its notice on its way)", users, err)
	}
	// A manual run that read u1 and u2 as due: u1's notice is on its way.
	m, mrs := b.reconfirmPush("u1", "u2")
	if n, claimed, err := b.s.ClaimReconfirmation(b.ctx, b.app.ID, "", b.now, &m, mrs, fanoutJob(m.ID)); err != nil || !claimed || n != 1 {
		t.Errorf("manual run: got %d %v, %v, want u2 alone", n, claimed, err)
	}
	if got, _ := b.s.Recipients(b.ctx, m.ID); len(got) != 1 || got[0].UserID != "u2" {
		t.Errorf("manual run's recipients: got %+v, want u2", got)
	}
	again, ars := b.reconfirmPush("u1", "u2")
	if n, claimed, err := b.s.ClaimReconfirmation(b.ctx, b.app.ID, "", b.now, &again, ars, fanoutJob(again.ID)); err != nil || !claimed || n != 0 {
		t.Errorf("second manual run: got %d %v, %v, want nobody named", n, claimed, err)
	}
	if _, err := b.s.PushRecord(b.ctx, again.ID); err != herald.ErrNotFound {
		t.Errorf("the second manual run's push: got %v, want ErrNotFound (nothing stored)", err)
	}
	if _, err := b.s.RecordReconfirmed(b.ctx, b.app.ID, p.ID, nil, b.now); err != nil {
		t.Fatal(err)
	}
	if users, err := b.s.ReconfirmingUsers(b.ctx, b.app.ID); err != nil || len(users) != 1 || !users["u2"] {
		t.Errorf("ReconfirmingUsers once the first is recorded: got %v, %v, want u2", users, err)
	}
	p2, rs2 := b.reconfirmPush("u1")
	if _, claimed, err := b.s.ClaimReconfirmation(b.ctx, b.app.ID, "2025-06-11", b.now, &p2, rs2, fanoutJob(p2.ID)); err != nil || claimed {
		t.Errorf("second claim of the day: got %v, %v, want false", claimed, err)
	}
	if _, err := b.s.PushRecord(b.ctx, p2.ID); err != herald.ErrNotFound {
		t.Errorf("the second claim's push: got %v, want ErrNotFound (nothing stored)", err)
	}
	for _, tc := range []struct {
		app, day string
	}{{b.app.ID, "2025-06-12"}, {b.newApp("other").ID, "2025-06-11"}} {
		if _, claimed, err := b.s.ClaimReconfirmation(b.ctx, tc.app, tc.day, b.now, nil, nil, nil); err != nil || !claimed {
			t.Errorf("claim %s %s without a push: got %v, %v, want true", tc.app, tc.day, claimed, err)
		}
		if done, err := b.s.ReconfirmationClaimed(b.ctx, tc.app, tc.day); err != nil || !done {
			t.Errorf("ReconfirmationClaimed %s %s: got %v, %v, want true", tc.app, tc.day, done, err)
		}
	}
	if done, err := b.s.ReconfirmationClaimed(b.ctx, b.app.ID, "2025-06-13"); err != nil || done {
		t.Errorf("ReconfirmationClaimed of a day not run: got %v, %v, want false", done, err)
	}
	if _, _, err := b.s.ClaimReconfirmation(b.ctx, "app_nope", "", b.now, nil, nil, nil); err != herald.ErrNotFound {
		t.Errorf("claim of an unknown app: got %v, want ErrNotFound", err)
	}
}

// testReconfirmationConcurrent: eight runs at once (manual ones and the
// daily one, as on several nodes), each having read the same due users:
// one push names them all, the others name nobody and store nothing.
func testReconfirmationConcurrent(t *testing.T, b *bundle) {
	users := []string{"u1", "u2", "u3"}
	b.dueUsers(users...)
	const runs = 8
	pushes := make([]herald.Push, runs)
	rss := make([][]herald.Recipient, runs)
	for i := range runs {
		pushes[i], rss[i] = b.reconfirmPush(users...)
		pushes[i].ID += "-" + itoa(i)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var named []int
	for i := range runs {
		wg.Go(func() {
			day := ""
			if i == 0 {
				day = "2025-06-11"
			}
			n, claimed, err := b.s.ClaimReconfirmation(b.ctx, b.app.ID, day, b.now, &pushes[i], rss[i], fanoutJob(pushes[i].ID))
			mu.Lock()
			defer mu.Unlock()
			if err != nil || !claimed {
				t.Errorf("run %d: got %v, %v, want claimed", i, claimed, err)
			}
			if n > 0 {
				named = append(named, n)
			}
		})
	}
	wg.Wait()
	if len(named) != 1 || named[0] != len(users) {
		t.Errorf("runs naming users: got %v, want one naming %d", named, len(users))
	}
	stored := 0
	for _, p := range pushes {
		if _, err := b.s.PushRecord(b.ctx, p.ID); err == nil {
			stored++
		}
	}
	if stored != 1 {
		t.Errorf("pushes stored: got %d, want 1", stored)
	}
}

// testReconfirmationRecorded: the users a re-confirmation reached are
// recorded (source reconfirmation, pair unchanged), their clocks restart
// and their consent.changed events are queued in order after their
// earlier ones; users withdrawn or without marketing since are left
// alone; a second recording of the push records nothing.
func testReconfirmationRecorded(t *testing.T, b *bundle) {
	b.setWebhook()
	for _, u := range []string{"u1", "u2", "off"} {
		b.register("d-"+u, "t-"+u, u)
		b.setUserConsent(u, change(new(true), nil))
	}
	b.setUserConsent("off", change(new(false), nil))
	must(t, "WithdrawUser", b.s.WithdrawUser(b.ctx, b.app.ID, "u2"))
	// devonly's consent is its device's, given before the device was
	// mapped to it; d-bare, its other device, has none.
	b.register("d-devonly", "t-devonly", "")
	b.setDeviceConsent("d-devonly", change(new(true), nil))
	b.register("d-devonly", "t-devonly", "devonly")
	b.register("d-bare", "t-bare", "devonly")
	b.tick(700 * 24 * time.Hour)
	ok, err := b.s.RecordReconfirmed(b.ctx, b.app.ID, "push_1", []string{"u1", "u2", "off", "nobody", "devonly"}, b.now)
	if err != nil || !ok {
		t.Fatalf("RecordReconfirmed: got %v, %v, want true", ok, err)
	}
	h := b.history("u1")
	if last := h[len(h)-1]; last.source != herald.SourceReconfirmation || last.from != day || last.to != day || last.device != "" {
		t.Errorf("u1's last record: got %v, want reconfirmation day→day", last)
	}
	if got := b.due(herald.ConsentDueAt(epoch, time.UTC)); len(got) != 0 {
		t.Errorf("due at the old date: got %v, want nobody (u1's clock restarted)", dueIDs(got))
	}
	if got := b.due(herald.ConsentDueAt(b.now, time.UTC)); len(got) != 2 || got[0].UserID != "devonly" || got[1].UserID != "u1" ||
		!got[0].ConfirmedAt.Equal(b.now) || !got[1].ConfirmedAt.Equal(b.now) {
		t.Errorf("due at the new date: got %+v, want devonly and u1 confirmed %v", got, b.now)
	}
	// devonly's clock restarts through its device's pair: one record, on
	// the device that held the consent, with the user's one event.
	dh := b.history("devonly")
	if last := dh[len(dh)-1]; last.source != herald.SourceReconfirmation || last.device != "d-devonly" || last.from != day || last.to != day {
		t.Errorf("devonly's last record: got %v, want reconfirmation of d-devonly day→day", last)
	} else if st := b.eventState("devonly", last.seq); st != herald.EventPending {
		t.Errorf("devonly's reconfirmation event: got %q, want pending", st)
	}
	if n := len(dh); n > 1 && dh[n-2].source == herald.SourceReconfirmation {
		t.Errorf("devonly: got %v, want one reconfirmation record (d-bare held no consent)", dh)
	}
	if st := b.eventState("u1", h[len(h)-1].seq); st != herald.EventPending {
		t.Errorf("u1's reconfirmation event: got %q, want pending", st)
	}
	for _, u := range []string{"u2", "off"} {
		for _, r := range b.history(u) {
			if r.source == herald.SourceReconfirmation {
				t.Errorf("%s: got a reconfirmation record %v, want none", u, r)
			}
		}
	}
	if ok, err := b.s.RecordReconfirmed(b.ctx, b.app.ID, "push_1", []string{"u1"}, b.now); err != nil || ok {
		t.Errorf("second RecordReconfirmed: got %v, %v, want false", ok, err)
	}
	if got := b.history("u1"); len(got) != len(h) {
		t.Errorf("after the second recording: got %d records, want %d", len(got), len(h))
	}
}

func imp(user string, marketing, night bool, at time.Time) herald.ConsentImport {
	return herald.ConsentImport{UserID: user, Consent: herald.Consent{Marketing: marketing, MarketingNight: night}, At: at}
}

// testImportDates: an imported pair is set on the user and its devices,
// with one record at the original date (no event, no notice) from which
// the two-year clock runs: consent given 23 months ago is due within 30
// days, consent given a year ago is not.
func testImportDates(t *testing.T, b *bundle) {
	b.setWebhook()
	b.enableNotices()
	b.register("d1", "t1", "old")
	b.register("d2", "t2", "recent")
	b.tick(time.Hour)
	old, recent := b.now.AddDate(0, -23, 0), b.now.AddDate(-1, 0, 0)
	n, skipped, err := b.s.ImportConsent(b.ctx, b.app.ID, []herald.ConsentImport{
		imp("old", true, true, old), imp("recent", true, false, recent)}, b.now)
	if err != nil || n != 2 || len(skipped) != 0 {
		t.Fatalf("ImportConsent: got %d %v, %v, want 2 imported", n, skipped, err)
	}
	u, ds := b.user("old")
	if u.Consent != night || len(ds) != 1 || ds[0].Consent != night {
		t.Errorf("old: got user %v devices %+v, want night consent on both", u.Consent, ds)
	}
	b.wantHistory("old", rec{1, "", herald.SourceImport, none, night}, rec{2, "d1", herald.SourceImport, none, night})
	rs, _ := b.s.ConsentHistory(b.ctx, b.app.ID, "old")
	if len(rs) > 0 && !rs[0].At.Equal(old) {
		t.Errorf("import record at: got %v, want %v", rs[0].At, old)
	}
	b.wantJobs(consentJob, 0)
	b.wantJobs(noticeJob, 0)
	got := b.due(b.now.Add(30 * 24 * time.Hour))
	if len(got) != 1 || got[0].UserID != "old" || !got[0].ConfirmedAt.Equal(old) {
		t.Errorf("due within 30 days: got %+v, want old, confirmed %v", got, old)
	}
}

// testImportSkips: unknown and withdrawn users, dates in the future or
// before the user's last record, and a pair the user's cannot take are
// skipped with their reasons; the rest of the batch is imported.
func testImportSkips(t *testing.T, b *bundle) {
	for _, u := range []string{"ok", "gone", "later", "future", "nightonly"} {
		b.register("d-"+u, "t-"+u, u)
	}
	must(t, "WithdrawUser", b.s.WithdrawUser(b.ctx, b.app.ID, "gone"))
	b.setUserConsent("later", change(new(true), nil)) // a record now
	past := b.now.Add(-48 * time.Hour)
	n, skipped, err := b.s.ImportConsent(b.ctx, b.app.ID, []herald.ConsentImport{
		imp("ok", true, false, past), imp("nobody", true, false, past), imp("gone", true, false, past),
		imp("later", false, false, past), imp("future", true, false, b.now.Add(time.Minute)),
		imp("nightonly", false, true, past), imp("ok", false, false, past.Add(-time.Hour)),
	}, b.now)
	want := []herald.ImportSkip{skip("nobody", herald.SkipUnknownUser), skip("gone", herald.SkipWithdrawnUser),
		skip("later", herald.SkipBeforeTrail), skip("future", herald.SkipFuture), skip("nightonly", herald.SkipPair), skip("ok", herald.SkipBeforeTrail)}
	if err != nil || n != 1 || len(skipped) != len(want) {
		t.Fatalf("ImportConsent: got %d %v, %v, want 1 imported and %v", n, skipped, err, want)
	}
	for i := range want {
		if skipped[i] != want[i] {
			t.Errorf("skip %d: got %v, want %v", i, skipped[i], want[i])
		}
	}
	if u, _ := b.user("later"); u.Consent != day {
		t.Errorf("later: got %v, want its pair untouched", u.Consent)
	}
	// The same entry again (a file imported twice) records nothing more.
	n, skipped, err = b.s.ImportConsent(b.ctx, b.app.ID, []herald.ConsentImport{imp("ok", true, false, past)}, b.now)
	if err != nil || n != 0 || len(skipped) != 1 || skipped[0] != skip("ok", herald.SkipImported) {
		t.Errorf("again: got %d %v, %v, want ok skipped as already imported", n, skipped, err)
	}
	if h := b.history("ok"); len(h) != 2 {
		t.Errorf("ok's history: got %v, want the import and its device's", h)
	}
}

func skip(user, reason string) herald.ImportSkip {
	return herald.ImportSkip{UserID: user, Reason: reason}
}
