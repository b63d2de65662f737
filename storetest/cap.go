package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/retention"
	"github.com/heraldpush/herald/sendstore"
)

// The frequency cap subtests: receipts claimed by the step that marks a
// capped push's sends in flight, refused at the cap, given back, pruned
// and withdrawn.
var capTests = []test{
	{"AdvanceChunk/ClaimsAtTheCap", testCapClaims},
	{"AdvanceChunk/ReclaimsOnALaterDay", testCapReclaim},
	{"ReleaseReceipts", testCapRelease},
	{"PruneReceipts", testCapPrune},
	{"WithdrawUser/DeletesReceipts", testCapWithdraw},
}

// capped starts a push to u1 and u2 (one device each, registered once)
// and returns it with its deliveries.
func (b *bundle) capped(devices []herald.Device) (herald.Push, []herald.Delivery) {
	b.t.Helper()
	p := b.acceptUsers("u1", "u2")
	ds := plan(devices, 10)
	b.start(p.ID, fanout(p.ID, ds))
	return p, ds
}

// capTargets are the send targets of ds from position 0, each claiming
// its user's receipt.
func capTargets(ds ...herald.Delivery) []sendstore.SlotTarget {
	ts := slotTargets(0, ds...)
	for i := range ts {
		ts[i].CapUser = ds[i].UserID
	}
	return ts
}

// oneADay is the claim of a cap of one push a day, judged at now.
func (b *bundle) oneADay() *herald.CapClaim {
	one := 1
	return herald.MarketingCap{PerDay: &one}.Claim(b.now, b.app.Location())
}

// cappedOf returns which of u1 and u2 are capped for the push.
func (b *bundle) cappedOf(pushID string, claim *herald.CapClaim) string {
	b.t.Helper()
	got, err := b.s.CappedUsers(b.ctx, b.app.ID, pushID, []string{"u1", "u2"}, *claim)
	must(b.t, "CappedUsers", err)
	return fmt.Sprint(got)
}

// twoPushes registers u1 and u2, and starts two pushes to them, the first
// of which claims both users' receipts at one a day.
func (b *bundle) twoPushes() (first, second herald.Push, ds2 []herald.Delivery) {
	b.t.Helper()
	devices := []herald.Device{b.register("d1", "t1", "u1"), b.register("d2", "t2", "u2")}
	p1, ds1 := b.capped(devices)
	p2, ds2 := b.capped(devices)
	b.advance(p1.ID, sendstore.ChunkStep{New: rng(0, 2), Targets: capTargets(ds1...), Cap: b.oneADay()}, 2)
	return p1, p2, ds2
}

func testCapClaims(t *testing.T, b *bundle) {
	p1, p2, ds2 := b.twoPushes()
	claim := b.oneADay()
	if got := b.cappedOf(p2.ID, claim); got != "map[u1:true u2:true]" {
		t.Errorf("the second push: got %s capped, want both", got)
	}
	if got := b.cappedOf(p1.ID, claim); got != "map[]" {
		t.Errorf("the first push, which holds their receipts: got %s capped, want none", got)
	}
	// The second push's step is refused at its first target, its range
	// left where it was; without Cap (not marketing) it marks both.
	b.advance(p2.ID, sendstore.ChunkStep{New: rng(0, 2), Targets: capTargets(ds2...), Cap: claim}, 0)
	users, err := b.s.ReceiptUsers(b.ctx, p2.ID)
	if err != nil || len(users) != 0 {
		t.Errorf("receipts of the refused push: got %v %v, want none", users, err)
	}
	b.advance(p2.ID, sendstore.ChunkStep{New: rng(0, 2), Targets: slotTargets(0, ds2...)}, 2)
	// At 23:59 in Seoul (the app's zone) the day's cap still holds; at
	// 00:00 (15:00 UTC) it no longer does.
	b.setNow(time.Date(2025, 6, 11, 14, 59, 0, 0, time.UTC))
	if got := b.cappedOf(p2.ID, b.oneADay()); got != "map[u1:true u2:true]" {
		t.Errorf("at 23:59: got %s capped, want both", got)
	}
	b.setNow(time.Date(2025, 6, 11, 15, 0, 0, 0, time.UTC))
	if got := b.cappedOf(p2.ID, b.oneADay()); got != "map[]" {
		t.Errorf("at the app's midnight: got %s capped, want none", got)
	}
}

func testCapRelease(t *testing.T, b *bundle) {
	p1, p2, ds2 := b.twoPushes()
	users, err := b.s.ReceiptUsers(b.ctx, p1.ID)
	if err != nil || fmt.Sprint(users) != "[u1 u2]" {
		t.Fatalf("ReceiptUsers: got %v %v, want [u1 u2]", users, err)
	}
	must(t, "ReleaseReceipts", b.s.ReleaseReceipts(b.ctx, p1.ID, []string{"u1"}))
	if got := b.cappedOf(p2.ID, b.oneADay()); got != "map[u2:true]" {
		t.Errorf("after u1's receipt was given back: got %s capped, want u2", got)
	}
	b.advance(p2.ID, sendstore.ChunkStep{New: rng(0, 2), Targets: capTargets(ds2...), Cap: b.oneADay()}, 1)
	if users, err := b.s.ReceiptUsers(b.ctx, p2.ID); err != nil || fmt.Sprint(users) != "[u1]" {
		t.Errorf("the second push's receipts: got %v %v, want [u1]", users, err)
	}
}

func testCapPrune(t *testing.T, b *bundle) {
	p1, _, _ := b.twoPushes()
	st, err := b.s.PruneReceipts(b.ctx, b.now, 10)
	if err != nil || st.Deleted[retention.RetainedReceipts] != 0 {
		t.Errorf("prune of those before now: got %+v %v, want none deleted", st, err)
	}
	st, err = b.s.PruneReceipts(b.ctx, b.now.Add(time.Millisecond), 1)
	if err != nil || st.Deleted[retention.RetainedReceipts] != 1 || !st.More {
		t.Errorf("prune of 1: got %+v %v, want 1 deleted and more", st, err)
	}
	if users, err := b.s.ReceiptUsers(b.ctx, p1.ID); err != nil || len(users) != 1 {
		t.Errorf("after the prune: got %v %v, want one receipt left", users, err)
	}
}

func testCapWithdraw(t *testing.T, b *bundle) {
	p1, p2, _ := b.twoPushes()
	must(t, "WithdrawUser", b.s.WithdrawUser(b.ctx, b.app.ID, "u1"))
	if users, err := b.s.ReceiptUsers(b.ctx, p1.ID); err != nil || fmt.Sprint(users) != "[u2]" {
		t.Errorf("after u1's withdrawal: got %v %v, want [u2]", users, err)
	}
	if got := b.cappedOf(p2.ID, b.oneADay()); got != "map[u2:true]" {
		t.Errorf("after u1's withdrawal: got %s capped, want u2", got)
	}
}

// testCapReclaim: a push that reaches a second device of a user on a
// later day of the app (a deferred part, a later zone, a device handed to
// the user) counts in that day: its receipt moves there when the day has
// room, and the send is refused when the user reached the cap that day
// with another push.
func testCapReclaim(t *testing.T, b *bundle) {
	devices := []herald.Device{b.register("d1", "t1", "u1"), b.register("d2", "t2", "u1"), b.register("d3", "t3", "u2")}
	one := 1
	day := func(n int) *herald.CapClaim {
		return herald.MarketingCap{PerDay: &one}.Claim(b.now.Add(time.Duration(n)*24*time.Hour), b.app.Location())
	}
	first := func(p herald.Push, ds []herald.Delivery, on int) {
		b.advance(p.ID, sendstore.ChunkStep{New: rng(0, 1), Targets: capTargets(ds[0]), Cap: day(on)}, 1)
	}
	second := func(p herald.Push, ds []herald.Delivery, on, want int) {
		b.advance(p.ID, sendstore.ChunkStep{Old: rng(0, 1), New: rng(0, 2), Targets: []sendstore.SlotTarget{
			{Pos: 1, DeviceID: ds[1].DeviceID, Token: ds[1].Token, CapUser: "u1"}}, Cap: day(on)}, want)
	}

	moved, dm := b.capped(devices)
	first(moved, dm, 0)
	second(moved, dm, 1, 2) // the next day: room, so the receipt moves to it
	other, _ := b.capped(devices)
	if got := b.cappedOf(other.ID, day(1)); got != "map[u1:true]" {
		t.Errorf("another push on the day the receipt moved to: got %s capped, want u1", got)
	}
	if got := b.cappedOf(other.ID, day(2)); got != "map[]" {
		t.Errorf("another push the day after: got %s capped, want none", got)
	}

	refused, dr := b.capped(devices)
	first(refused, dr, 3)
	taken, dt := b.capped(devices)
	first(taken, dt, 4)
	second(refused, dr, 4, 1) // the next day is taken by another push: u1's second device is refused
}
