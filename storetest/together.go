package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// The together subtests make registrations in one batch of the engine's
// group commit (Harness.Together), where a store may make them together:
// each must end as if made one after another in the batch's order, and
// answer as it would alone.
var togetherTests = []test{
	{"RegisterTogether/New", testTogetherNew},
	{"RegisterTogether/OneToken", testTogetherOneToken},
	{"RegisterTogether/TokenBetweenDevices", testTogetherTokenBetween},
	{"RegisterTogether/OneUser", testTogetherOneUser},
	{"RegisterTogether/FailsAlone", testTogetherFailsAlone},
	{"RegisterTogether/ConsentTrail", testTogetherTrail},
	{"EventsTogether", testTogetherEvents},
}

// together registers each registration of regs on the bundle's app (those
// with a non-empty appID on that app) in one batch, and returns each's
// device and error.
func (b *bundle) together(regs []herald.DeviceRegistration, appIDs ...string) ([]herald.Device, []error) {
	b.t.Helper()
	if b.h.Together == nil {
		b.t.Skip("the engine has no group commit")
	}
	ds, errs := make([]herald.Device, len(regs)), make([]error, len(regs))
	calls := make([]func(), len(regs))
	for i, reg := range regs {
		app := b.app.ID
		if i < len(appIDs) && appIDs[i] != "" {
			app = appIDs[i]
		}
		calls[i] = func() { ds[i], errs[i] = b.s.RegisterDevice(b.ctx, app, reg) }
	}
	b.h.Together(calls...)
	return ds, errs
}

// holders returns the devices holding each token, by token.
func (b *bundle) holders() map[string][]string {
	b.t.Helper()
	all, err := b.allDevices(b.app.ID)
	must(b.t, "AllDevices", err)
	out := map[string][]string{}
	for _, d := range all {
		out[d.Token] = append(out[d.Token], d.ID)
	}
	return out
}

// testTogetherNew: new devices of new users and of none, an existing
// device given a new token and a new user: each answered and stored as
// alone.
func testTogetherNew(t *testing.T, b *bundle) {
	created := b.now
	b.register("d0", "t0", "")
	b.tick(time.Second)
	ds, errs := b.together([]herald.DeviceRegistration{
		registration("d1", "t1", "u1"), registration("d2", "t2", ""), registration("d0", "t0b", "u3"),
	})
	for i, err := range errs {
		must(t, "RegisterDevice "+itoa(i), err)
	}
	if d := ds[0]; d.ID != "d1" || d.Token != "t1" || d.UserID == nil || *d.UserID != "u1" || !d.CreatedAt.Equal(b.now) ||
		!d.TokenUpdatedAt.Equal(b.now) {
		t.Errorf("d1: got %+v, want t1 mapped to u1, made now", d)
	}
	if d := ds[1]; d.ID != "d2" || d.Token != "t2" || d.UserID != nil {
		t.Errorf("d2: got %+v, want t2 unmapped", d)
	}
	if d := ds[2]; d.Token != "t0b" || d.UserID == nil || *d.UserID != "u3" || !d.CreatedAt.Equal(created) ||
		!d.TokenUpdatedAt.Equal(b.now) {
		t.Errorf("d0: got %+v, want t0b mapped to u3, made %v, refreshed now", d, created)
	}
	for _, id := range []string{"d0", "d1", "d2"} {
		stored, ok := b.device(id)
		want := ds[map[string]int{"d1": 0, "d2": 1, "d0": 2}[id]]
		if !ok || stored.Token != want.Token || (stored.UserID == nil) != (want.UserID == nil) {
			t.Errorf("%s stored: got %+v (found %v), want %+v", id, stored, ok, want)
		}
	}
	for _, u := range []string{"u1", "u3"} {
		if got, _ := b.user(u); got.State != herald.UserRegistered || !got.CreatedAt.Equal(b.now) {
			t.Errorf("%s: got %+v, want registered now", u, got)
		}
	}
	if h := b.holders(); !equal(h["t0"], nil) || !equal(h["t0b"], []string{"d0"}) {
		t.Errorf("holders: got %v, want t0 free and t0b held by d0", h)
	}
}

// testTogetherOneToken: two devices register one token in one batch: the
// second takes it from the first, as one after the other.
func testTogetherOneToken(t *testing.T, b *bundle) {
	_, errs := b.together([]herald.DeviceRegistration{
		registration("d1", "shared", "u1"), registration("d2", "shared", "u2"), registration("d3", "t3", "u3"),
	})
	for i, err := range errs {
		must(t, "RegisterDevice "+itoa(i), err)
	}
	h := b.holders()
	if !equal(h["shared"], []string{"d2"}) || !equal(h["t3"], []string{"d3"}) {
		t.Errorf("holders: got %v, want shared held by d2 (the later), t3 by d3", h)
	}
	if _, ok := b.device("d1"); ok {
		t.Error("d1, which lost its token: still stored, want deleted")
	}
}

// testTogetherTokenBetweenDevices: a device of the batch takes the token
// of a device outside it, while another takes the first one's old token:
// the order decides who is left, as one after the other.
func testTogetherTokenBetween(t *testing.T, b *bundle) {
	b.register("a", "tA", "ua")
	b.register("b", "tB", "ub")
	_, errs := b.together([]herald.DeviceRegistration{registration("a", "tB", "ua"), registration("c", "tA", "uc")})
	for i, err := range errs {
		must(t, "RegisterDevice "+itoa(i), err)
	}
	h := b.holders()
	if !equal(h["tB"], []string{"a"}) || !equal(h["tA"], []string{"c"}) {
		t.Errorf("holders: got %v, want tB held by a, tA by c", h)
	}
	if _, ok := b.device("b"); ok {
		t.Error("b, which lost its token to a: still stored, want deleted")
	}
}

// testTogetherOneUser: a new user registered from two devices in one
// batch, and a withdrawn user registered again beside them.
func testTogetherOneUser(t *testing.T, b *bundle) {
	b.register("d0", "t0", "w")
	must(t, "WithdrawUser", b.s.WithdrawUser(b.ctx, b.app.ID, "w"))
	_, errs := b.together([]herald.DeviceRegistration{
		registration("d1", "t1", "u1"), registration("d2", "t2", "u1"), registration("d3", "t3", "w"),
	})
	for i, err := range errs {
		must(t, "RegisterDevice "+itoa(i), err)
	}
	if u, ds := b.user("u1"); u.State != herald.UserRegistered || !equal(deviceIDs(ds), []string{"d1", "d2"}) {
		t.Errorf("u1: got %+v with %v, want registered with d1 and d2", u, deviceIDs(ds))
	}
	if u, ds := b.user("w"); u.State != herald.UserRegistered || u.WithdrawnAt != nil || !equal(deviceIDs(ds), []string{"d3"}) {
		t.Errorf("w: got %+v with %v, want registered again with d3", u, deviceIDs(ds))
	}
}

// testTogetherFailsAlone: a registration of an app that does not exist
// fails with ErrNotFound and writes nothing; the others of its batch are
// made.
func testTogetherFailsAlone(t *testing.T, b *bundle) {
	ds, errs := b.together([]herald.DeviceRegistration{
		registration("d1", "t1", "u1"), registration("d2", "t2", "u2"), registration("d3", "t3", "u3"),
	}, "", "app_missing", "")
	wantErr(t, "d2, of no app", errs[1], herald.ErrNotFound)
	for _, i := range []int{0, 2} {
		must(t, "RegisterDevice "+itoa(i), errs[i])
		if ds[i].ID != "d"+itoa(i+1) {
			t.Errorf("registration %d: got %+v, want d%d", i, ds[i], i+1)
		}
	}
	if h := b.holders(); !equal(h["t1"], []string{"d1"}) || !equal(h["t3"], []string{"d3"}) || len(h) != 2 {
		t.Errorf("holders: got %v, want t1 and t3 only", h)
	}
	if _, _, err := b.s.User(b.ctx, "app_missing", "u2"); !errors.Is(err, herald.ErrUserNotFound) {
		t.Errorf("u2 of no app: got %v, want %v", err, herald.ErrUserNotFound)
	}
}

// testTogetherTrail: in one batch, new devices record the app's default
// pair, and a device mapped to a user whose pair was set records the pair
// it takes.
func testTogetherTrail(t *testing.T, b *bundle) {
	b.register("d0", "t0", "uS")
	b.setUserConsent("uS", change(new(true), new(true)))
	b.setDefaultConsent(day)
	b.tick(time.Minute)
	_, errs := b.together([]herald.DeviceRegistration{
		registration("d1", "t1", "u1"), registration("d2", "t2", "uS"), registration("d3", "t3", "u3"),
	})
	for i, err := range errs {
		must(t, "RegisterDevice "+itoa(i), err)
	}
	b.wantHistory("u1", rec{1, "d1", herald.SourceAppDefault, none, day})
	b.wantHistory("u3", rec{1, "d3", herald.SourceAppDefault, none, day})
	b.wantHistory("uS",
		rec{1, "", herald.SourceServerAPI, none, night},
		rec{2, "d0", herald.SourceServerAPI, none, night},
		rec{3, "d2", herald.SourceAppDefault, none, day},
		rec{4, "d2", herald.SourceSDK, day, night},
	)
}

// testTogetherEvents: event reports of one batch, where a store may write
// those of pushes sent to their devices together, each answered and
// counted as alone: a repeat of an earlier report, new marks, a device
// reporting twice (the first asked recorded) and one whose send is in
// flight (kept pending, counted once sent).
func testTogetherEvents(t *testing.T, b *bundle) {
	if b.h.Together == nil {
		b.t.Skip("the engine has no group commit")
	}
	p, ds := b.sending(5, 10)
	b.advance(p.ID, sendstore.ChunkStep{New: rng(0, 5), Targets: slotTargets(0, ds...)}, 5)
	b.advance(p.ID, sendstore.ChunkStep{Old: rng(0, 5), New: rng(4, 5)}, 5) // d5 still in flight
	wantBools(t, "d1 before", b.record("d1", b.mark(p.ID, herald.EventReceived)), true)
	reports := []struct {
		device string
		marks  []herald.EventMark
		want   []bool
	}{
		{"d1", b.receivedAndOpened(p.ID), []bool{false, true}},
		{"d2", b.receivedAndOpened(p.ID), []bool{true, true}},
		{"d3", []herald.EventMark{b.mark(p.ID, herald.EventReceived)}, []bool{true}},
		{"d3", b.receivedAndOpened(p.ID), []bool{false, true}},
		{"d5", b.receivedAndOpened(p.ID), []bool{true, true}},
		{"d4", []herald.EventMark{b.mark(p.ID, herald.EventOpened), b.mark(p.ID, herald.EventOpened)}, []bool{true, false}},
	}
	got, errs := make([][]bool, len(reports)), make([]error, len(reports))
	calls := make([]func(), len(reports))
	for i, r := range reports {
		calls[i] = func() { got[i], errs[i] = b.s.RecordEvents(b.ctx, b.app.ID, r.device, r.marks) }
	}
	b.h.Together(calls...)
	for i, r := range reports {
		must(t, "RecordEvents "+itoa(i), errs[i])
		wantBools(t, "report "+itoa(i)+" of "+r.device, got[i], r.want...)
	}
	b.wantEventCounts(p.ID, 3, 4)
	b.advance(p.ID, sendstore.ChunkStep{Old: rng(4, 5), New: rng(5, 5)}, 5)
	b.wantEventCounts(p.ID, 4, 5)
	b.wantReceivedAtMostSent(p.ID)
}
