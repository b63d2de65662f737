package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

var consentTests = []test{
	{"Trail/EverySource", testTrailEverySource},
	{"Trail/AdoptedOnMapping", testTrailAdopted},
	{"Trail/UnmappedDevice", testTrailUnmapped},
	{"Trail/ErrUserNotFound", testTrailUserNotFound},
	{"Due/Boundary", testDueBoundary},
	{"Due/Reconfirmation", testDueReconfirmation},
	{"Due/WhoIsListed", testDueWhoIsListed},
	{"Due/DeviceBringsItsClock", testDueDeviceClock},
	{"Due/Pages", testDuePages},
	{"Events/OneJobPerUser", testEventsOneJobPerUser},
	{"Events/NoWebhookNoEvent", testEventsNoWebhook},
	{"Events/EndRacesNewRecord", testEventsEndRaces},
}

// consentJob is the kind of the job of a consent.changed event.
var consentJob = herald.ConsentEventJob{}.Kind()

// rec is what the suite compares of a record.
type rec struct {
	seq      int64
	device   string
	source   herald.ConsentSource
	from, to herald.Consent
}

func (r rec) String() string {
	return fmt.Sprintf("#%d %s device %q %v→%v", r.seq, r.source, r.device, r.from, r.to)
}

// history returns a user's records as the suite compares them, checking
// what every record of the user must hold.
func (b *bundle) history(userID string) []rec {
	b.t.Helper()
	rs, err := b.s.ConsentHistory(b.ctx, b.app.ID, userID)
	if err != nil {
		b.t.Fatalf("ConsentHistory %s: %v", userID, err)
	}
	out := make([]rec, len(rs))
	for i, r := range rs {
		if r.AppID != b.app.ID || r.UserID == nil || *r.UserID != userID || r.ID == 0 || r.At.IsZero() {
			b.t.Errorf("record %d: got %+v, want one of app %s, user %s, with an id and a time", i, r, b.app.ID, userID)
		}
		out[i] = rec{seq: r.Seq, source: r.Source, from: r.From, to: r.To}
		if r.DeviceID != nil {
			out[i].device = *r.DeviceID
		}
	}
	return out
}

func (b *bundle) wantHistory(userID string, want ...rec) {
	b.t.Helper()
	if got := b.history(userID); fmt.Sprint(got) != fmt.Sprint(want) {
		b.t.Errorf("history of %s:\n got %v\nwant %v", userID, got, want)
	}
}

func (b *bundle) setUserConsent(userID string, c herald.ConsentChange) {
	b.t.Helper()
	if _, err := b.s.SetUserConsent(b.ctx, b.app.ID, userID, c); err != nil {
		b.t.Fatalf("SetUserConsent %s: %v", userID, err)
	}
}

func (b *bundle) setDeviceConsent(deviceID string, c herald.ConsentChange) {
	b.t.Helper()
	if _, err := b.s.SetDeviceConsent(b.ctx, b.app.ID, deviceID, c); err != nil {
		b.t.Fatalf("SetDeviceConsent %s: %v", deviceID, err)
	}
}

func (b *bundle) setDefaultConsent(c herald.Consent) {
	b.t.Helper()
	b.app.DefaultConsent = c
	must(b.t, "UpdateApp", b.s.UpdateApp(b.ctx, b.app))
}

var (
	none  = consent(false, false)
	day   = consent(true, false)
	night = consent(true, true)
)

// testTrailEverySource: each way a pair changes is recorded, in order,
// with its source, and the trail outlives the withdrawal.
func testTrailEverySource(t *testing.T, b *bundle) {
	b.setDefaultConsent(day)
	b.register("d1", "t1", "u1")
	b.tick(time.Minute)
	b.setDeviceConsent("d1", change(nil, new(true)))
	b.tick(time.Minute)
	b.setUserConsent("u1", change(new(false), nil))
	b.tick(time.Minute)
	admin := change(new(true), nil)
	admin.Source = herald.SourceAdmin
	b.setUserConsent("u1", admin)
	b.tick(time.Minute)
	must(t, "WithdrawUser", b.s.WithdrawUser(b.ctx, b.app.ID, "u1"))
	b.wantHistory("u1",
		rec{1, "d1", herald.SourceAppDefault, none, day},
		rec{2, "d1", herald.SourceSDK, day, night},
		rec{3, "", herald.SourceServerAPI, none, none},
		rec{4, "d1", herald.SourceServerAPI, night, none},
		rec{5, "", herald.SourceAdmin, none, day},
		rec{6, "d1", herald.SourceAdmin, none, day},
		rec{7, "", herald.SourceWithdrawal, day, none},
		rec{8, "d1", herald.SourceWithdrawal, day, none},
	)
	rs, _ := b.s.ConsentHistory(b.ctx, b.app.ID, "u1")
	for i, minutes := range []int{0, 1, 2, 2, 3, 3, 4, 4} {
		if want := epoch.Add(time.Duration(minutes) * time.Minute); i < len(rs) && !rs[i].At.Equal(want) {
			t.Errorf("record %d at: got %v, want %v", i+1, rs[i].At, want)
		}
	}
	// Registered again, the user's records go on after the old ones.
	b.setDefaultConsent(none)
	b.register("d2", "t2", "u1")
	b.setUserConsent("u1", change(new(true), nil))
	if got := b.history("u1"); len(got) != 10 || got[8].seq != 9 || got[9].seq != 10 {
		t.Errorf("after registering again: got %v, want records 9 and 10 after the first eight", got)
	}
}

// testTrailAdopted: a device mapped to a user whose pair was set takes it,
// recorded as the SDK's (the call that mapped it); a device already
// holding the pair records nothing.
func testTrailAdopted(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	b.setUserConsent("u1", change(new(true), new(true)))
	b.register("d2", "t2", "u1")
	b.register("d3", "t3", "")
	if _, err := b.s.SetDeviceUser(b.ctx, b.app.ID, "d3", new("u1")); err != nil {
		t.Fatal(err)
	}
	b.register("d2", "t2", "u1") // already mapped: nothing changes
	b.wantHistory("u1",
		rec{1, "", herald.SourceServerAPI, none, night},
		rec{2, "d1", herald.SourceServerAPI, none, night},
		rec{3, "d2", herald.SourceSDK, none, night},
		rec{4, "d3", herald.SourceSDK, none, night},
	)
}

// testTrailUnmapped: a device mapped to nobody is recorded without a
// user, so it shows in no user's history.
func testTrailUnmapped(t *testing.T, b *bundle) {
	b.setDefaultConsent(day)
	b.register("d1", "t1", "")
	b.setDeviceConsent("d1", change(new(false), nil))
	b.register("d2", "t2", "u1")
	b.wantHistory("u1", rec{1, "d2", herald.SourceAppDefault, none, day})
}

func testTrailUserNotFound(t *testing.T, b *bundle) {
	_, err := b.s.ConsentHistory(b.ctx, b.app.ID, "nobody")
	wantErr(t, "ConsentHistory", err, herald.ErrUserNotFound)
}

// due returns the ids ConsentDue lists at until, in one page, and checks
// that CountConsentDue agrees.
func (b *bundle) due(until time.Time) []herald.ConsentDue {
	b.t.Helper()
	ds, next, err := b.s.ConsentDue(b.ctx, b.app.ID, until, 100, "")
	if err != nil || next != "" {
		b.t.Fatalf("ConsentDue: got next %q, %v", next, err)
	}
	n, err := b.s.CountConsentDue(b.ctx, b.app.ID, until)
	if err != nil || n != len(ds) {
		b.t.Errorf("CountConsentDue: got %d, %v, want %d", n, err, len(ds))
	}
	return ds
}

func dueIDs(ds []herald.ConsentDue) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.UserID
	}
	return out
}

// testDueBoundary: consent confirmed at t is due at t plus two calendar
// years in the app's zone: listed from that instant on, not a millisecond
// before.
func testDueBoundary(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	b.setUserConsent("u1", change(new(true), nil))
	dueAt := time.Date(2027, 6, 11, 13, 4, 30, 0, time.UTC)
	if got := b.due(dueAt.Add(-time.Millisecond)); len(got) != 0 {
		t.Errorf("a millisecond before two years: got %v, want nobody", dueIDs(got))
	}
	got := b.due(dueAt)
	if len(got) != 1 {
		t.Fatalf("at exactly two years: got %v, want u1", dueIDs(got))
	}
	want := herald.ConsentDue{UserID: "u1", Consent: day, ConfirmedAt: epoch, DueAt: dueAt}
	if got[0] != want {
		t.Errorf("got %+v, want %+v", got[0], want)
	}
	if u, _ := b.user("u1"); u.ConsentConfirmedAt == nil || !u.ConsentConfirmedAt.Equal(epoch) {
		t.Errorf("User: got ConsentConfirmedAt %v, want %v", u.ConsentConfirmedAt, epoch)
	}
}

// testDueReconfirmation: setting the same value again through the Server
// API or the SDK is recorded and restarts the clock; a device taking its
// user's pair does not.
func testDueReconfirmation(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	b.setUserConsent("u1", change(new(true), nil))
	b.tick(400 * 24 * time.Hour)
	b.setUserConsent("u1", change(new(true), nil))
	firstDue := time.Date(2027, 6, 11, 13, 4, 30, 0, time.UTC)
	if got := b.due(firstDue); len(got) != 0 {
		t.Errorf("after re-confirmation, at the first due time: got %v, want nobody", dueIDs(got))
	}
	if got := b.due(herald.ConsentDueAt(b.now, time.UTC)); len(got) != 1 || !got[0].ConfirmedAt.Equal(b.now) {
		t.Errorf("at the new due time: got %+v, want u1 confirmed %v", got, b.now)
	}
	b.tick(24 * time.Hour)
	b.register("d2", "t2", "u1") // takes the user's pair: confirms nothing
	if got := b.due(herald.ConsentDueAt(b.now.Add(-24*time.Hour), time.UTC)); len(got) != 1 {
		t.Errorf("after a device took the pair: got %v, want u1 still due a day earlier", dueIDs(got))
	}
	b.tick(24 * time.Hour)
	b.setDeviceConsent("d1", change(new(true), nil))
	if got := b.due(herald.ConsentDueAt(b.now, time.UTC)); len(got) != 1 || !got[0].ConfirmedAt.Equal(b.now) {
		t.Errorf("after the SDK set the same value: got %+v, want u1 confirmed %v", got, b.now)
	}
	if h := b.history("u1"); len(h) != 5 || h[2].from != day || h[2].to != day || h[4].source != herald.SourceSDK || h[4].from != day {
		t.Errorf("history: got %v, want both re-confirmations recorded as day→day", h)
	}
}

// testDueWhoIsListed: only registered users with marketing consent, their
// own or a device's; the listed pair is what a push sees.
func testDueWhoIsListed(t *testing.T, b *bundle) {
	for _, u := range []string{"own", "device", "off", "gone"} {
		b.register("d-"+u, "t-"+u, u)
	}
	b.setUserConsent("own", change(new(true), new(true)))
	b.setDeviceConsent("d-device", change(new(true), nil))
	b.setUserConsent("off", change(new(true), nil))
	b.setUserConsent("off", change(new(false), nil))
	b.setUserConsent("gone", change(new(true), nil))
	must(t, "WithdrawUser", b.s.WithdrawUser(b.ctx, b.app.ID, "gone"))
	got := b.due(epoch.AddDate(3, 0, 0))
	want := []herald.ConsentDue{
		{UserID: "device", Consent: day}, {UserID: "own", Consent: night},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want device and own", dueIDs(got))
	}
	for i := range want {
		if got[i].UserID != want[i].UserID || got[i].Consent != want[i].Consent {
			t.Errorf("entry %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// testDueDeviceClock: a device with its own consent mapped to a user
// brings the time it was given.
func testDueDeviceClock(t *testing.T, b *bundle) {
	b.register("d1", "t1", "")
	b.setDeviceConsent("d1", change(new(true), nil))
	given := b.now
	b.tick(30 * 24 * time.Hour)
	b.register("d1", "t1", "u1")
	got := b.due(epoch.AddDate(3, 0, 0))
	if len(got) != 1 || !got[0].ConfirmedAt.Equal(given) {
		t.Errorf("got %+v, want u1 confirmed when the device was given consent (%v)", got, given)
	}
}

// testDuePages: soonest due first, then by user id, cut into pages by the
// cursor; a cursor this list never gave is refused.
func testDuePages(t *testing.T, b *bundle) {
	for i, u := range []string{"c", "a", "b", "d", "e"} {
		b.register("d-"+u, "t-"+u, u)
		if i == 3 {
			b.tick(time.Hour)
		}
		b.setUserConsent(u, change(new(true), nil))
	}
	until := epoch.AddDate(3, 0, 0)
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		ds, next, err := b.s.ConsentDue(b.ctx, b.app.ID, until, 2, cursor)
		must(t, "ConsentDue", err)
		got = append(got, dueIDs(ds)...)
		if next == "" || pages > 5 {
			break
		}
		cursor = next
	}
	if want := []string{"a", "b", "c", "d", "e"}; !equal(got, want) {
		t.Errorf("pages: got %v, want %v", got, want)
	}
	_, _, err := b.s.ConsentDue(b.ctx, b.app.ID, until, 2, "junk")
	wantErr(t, "bad cursor", err, herald.ErrInvalidRequest)
}

func (b *bundle) setWebhook() {
	b.t.Helper()
	must(b.t, "SetWebhook", b.s.SetWebhook(b.ctx, b.app.ID, "https://hooks.example.com/h", []byte("sealed")))
}

// eventState returns the state of the event of a user's record seq.
func (b *bundle) eventState(userID string, seq int64) herald.ConsentEventState {
	b.t.Helper()
	_, st, err := b.s.ConsentEvent(b.ctx, b.app.ID, userID, seq)
	if err != nil {
		b.t.Fatalf("ConsentEvent %s %d: %v", userID, seq, err)
	}
	return st
}

// testEventsOneJobPerUser: a user's decisions queue one job, for the
// first event; ending an event queues the next; ending it twice does
// nothing more.
func testEventsOneJobPerUser(t *testing.T, b *bundle) {
	b.setWebhook()
	b.register("d1", "t1", "u1")
	b.register("d2", "t2", "u2")
	b.setUserConsent("u1", change(new(true), nil)) // records 1 (user) and 2 (device): one event
	b.setDeviceConsent("d1", change(nil, new(true)))
	must(t, "WithdrawUser", b.s.WithdrawUser(b.ctx, b.app.ID, "u1"))
	b.setUserConsent("u2", change(new(true), nil))
	b.wantJobs(consentJob, 2) // u1's first event, u2's
	for seq, want := range map[int64]herald.ConsentEventState{1: herald.EventPending, 2: herald.EventNone, 3: herald.EventPending, 4: herald.EventPending} {
		if got := b.eventState("u1", seq); got != want {
			t.Errorf("event of record %d: got %q, want %q", seq, got, want)
		}
	}
	r, _, err := b.s.ConsentEvent(b.ctx, b.app.ID, "u1", 3)
	if err != nil || r.Source != herald.SourceSDK || r.DeviceID == nil || *r.DeviceID != "d1" || r.To != night {
		t.Errorf("ConsentEvent 3: got %+v, %v, want the SDK's switch on d1 to %v", r, err, night)
	}
	ended, err := b.s.EndConsentEvent(b.ctx, b.app.ID, "u1", 1, herald.EventSent)
	if err != nil || !ended {
		t.Fatalf("EndConsentEvent 1: got %v, %v, want true", ended, err)
	}
	b.wantJobs(consentJob, 3)
	ended, err = b.s.EndConsentEvent(b.ctx, b.app.ID, "u1", 1, herald.EventSent)
	if err != nil || ended {
		t.Errorf("EndConsentEvent 1 again: got %v, %v, want false", ended, err)
	}
	b.wantJobs(consentJob, 3)
	must(t, "end 3", endEvent(b, "u1", 3, herald.EventDropped))
	must(t, "end 4", endEvent(b, "u1", 4, herald.EventSent))
	b.wantJobs(consentJob, 4) // none after the last
	if got := b.eventState("u1", 3); got != herald.EventDropped {
		t.Errorf("event 3: got %q, want dropped", got)
	}
	_, _, err = b.s.ConsentEvent(b.ctx, b.app.ID, "u1", 99)
	wantErr(t, "ConsentEvent 99", err, herald.ErrNotFound)
}

func endEvent(b *bundle, userID string, seq int64, end herald.ConsentEventState) error {
	ended, err := b.s.EndConsentEvent(b.ctx, b.app.ID, userID, seq, end)
	if err == nil && !ended {
		err = fmt.Errorf("event %d was not pending", seq)
	}
	return err
}

func testEventsNoWebhook(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	b.setUserConsent("u1", change(new(true), nil))
	b.wantJobs(consentJob, 0)
	if got := b.eventState("u1", 1); got != herald.EventNone {
		t.Errorf("event: got %q, want none", got)
	}
}

// testEventsEndRaces: an event ending while the user's next record is
// made: whichever commits second queues the next job, so every round
// adds exactly one.
func testEventsEndRaces(t *testing.T, b *bundle) {
	b.setWebhook()
	b.register("d1", "t1", "u1")
	b.setUserConsent("u1", change(new(true), nil))
	head := int64(1)
	for round := range 10 {
		var endErr error
		concurrently(2, func(i int) {
			if i == 0 {
				endErr = endEvent(b, "u1", head, herald.EventSent)
				return
			}
			b.setUserConsent("u1", change(new(round%2 == 0), nil))
		})
		must(t, "EndConsentEvent", endErr)
		for _, r := range b.history("u1") {
			if r.device == "" {
				head = r.seq // the user's newest record: the one pending now
			}
		}
		b.wantJobs(consentJob, round+2)
		if t.Failed() {
			return
		}
	}
}
