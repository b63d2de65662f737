package storetest

import (
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

var fanoutTests = []test{
	{"DevicePage/Order", testDevicePageOrder},
	{"DevicePage/Topic", testDevicePageTopic},
	{"StartSending/Pages", testStartPages},
	{"StartSending/StalePage", testStartStalePage},
	{"StartSending/LastPageFinishes", testStartLastPageFinishes},
	{"DeliveriesOf", testDeliveriesOf},
}

// pageAll reads the app's devices (a topic's with one) through DevicePage
// in pages of size, checking that every page but the last is full.
func (b *bundle) pageAll(appID, topic string, size int) ([]herald.Device, error) {
	var all []herald.Device
	var after sendstore.DeviceCursor
	for {
		page, next, err := b.s.DevicePage(b.ctx, appID, sendstore.Selection{Topic: topic}, after, size)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if len(page) < size {
			return all, nil
		}
		after = next
	}
}

// allDevices returns every device of the app.
func (b *bundle) allDevices(appID string) ([]herald.Device, error) { return b.pageAll(appID, "", 2) }

// topicDevices returns the devices subscribed to a topic.
func (b *bundle) topicDevices(appID, topic string) ([]herald.Device, error) {
	return b.pageAll(appID, topic, 2)
}

// idsInOrder returns the devices' ids in the order given.
func idsInOrder(ds []herald.Device) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

func testDevicePageOrder(t *testing.T, b *bundle) {
	b.register("d5", "t5", "u2")
	b.register("d1", "t1", "u2")
	b.register("d9", "t9", "")
	b.register("d2", "t2", "u1")
	b.register("d3", "t3", "")
	b.register("d4", "t4", "u3")
	other := b.newApp("other")
	_, err := b.s.RegisterDevice(b.ctx, other.ID, registration("d0", "t0", ""))
	must(t, "RegisterDevice", err)
	// Unmapped devices by id, then mapped ones by user and id.
	want := []string{"d3", "d9", "d2", "d1", "d5", "d4"}
	for _, size := range []int{1, 2, 3, 4, 6, 7} {
		ds, err := b.pageAll(b.app.ID, "", size)
		if err != nil || !equal(idsInOrder(ds), want) {
			t.Errorf("pages of %d: got (%v, %v), want %v", size, idsInOrder(ds), err, want)
		}
	}
	// A cursor within a user's devices continues with the user's next.
	page, after, err := b.s.DevicePage(b.ctx, b.app.ID, sendstore.Selection{}, sendstore.DeviceCursor{}, 4)
	must(t, "DevicePage", err)
	if !equal(idsInOrder(page), want[:4]) || after != (sendstore.DeviceCursor{Mapped: true, UserID: "u2", DeviceID: "d1"}) {
		t.Errorf("first 4: got %v then %+v, want %v then u2/d1", idsInOrder(page), after, want[:4])
	}
	if page, _, _ := b.s.DevicePage(b.ctx, b.app.ID, sendstore.Selection{}, after, 4); !equal(idsInOrder(page), want[4:]) {
		t.Errorf("after u2/d1: got %v, want %v", idsInOrder(page), want[4:])
	}
	if page, _, err := b.s.DevicePage(b.ctx, "app_missing", sendstore.Selection{}, sendstore.DeviceCursor{}, 4); err != nil || len(page) != 0 {
		t.Errorf("unknown app: got (%v, %v), want none", idsInOrder(page), err)
	}
}

func testDevicePageTopic(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	b.register("d2", "t2", "u1")
	b.register("d3", "t3", "u2")
	b.register("d4", "t4", "")
	if _, err := b.s.SubscribeTopic(b.ctx, b.app.ID, "news", []string{"u1"}); err != nil {
		t.Fatalf("SubscribeTopic: %v", err)
	}
	for _, size := range []int{1, 2, 3} {
		if ds, err := b.pageAll(b.app.ID, "news", size); err != nil || !equal(deviceIDs(ds), []string{"d1", "d2"}) {
			t.Errorf("pages of %d: got (%v, %v), want [d1 d2]", size, deviceIDs(ds), err)
		}
	}
}

// pagedTopicPush accepts a topic push and returns it with its fan-out in
// two pages: u1's and u2's devices, then u3's.
func (b *bundle) pagedTopicPush() (herald.Push, sendstore.Fanout, sendstore.Fanout) {
	devices := []herald.Device{b.register("d1", "t1", "u1"), b.register("d2", "t2", "u1"), b.register("d3", "t3", "u2"),
		b.register("d4", "t4", "u3")}
	p, _ := b.newPush()
	p.Kind, p.Topic, p.RequestedUsers = herald.KindAll, "", 0
	b.charge(&p, 0)
	b.accept(p, nil)
	ds := plan(devices, 2) // chunks 0 and 1
	first := sendstore.Fanout{More: true, Deliveries: ds[:3], Jobs: []herald.Job{sendJob(p.ID, 0), sendJob(p.ID, 1)},
		Finish: finishJob(p.ID), Charge: b.app.PushCharge(p, 2, b.now)}
	first.To = sendstore.FanoutCursor{After: sendstore.DeviceCursor{Mapped: true, UserID: "u2", DeviceID: "d3"}, Seq: 3, Chunk: 2, Users: 2}
	ds[3].Chunk = 2
	last := sendstore.Fanout{From: first.To, Deliveries: ds[3:], Jobs: []herald.Job{sendJob(p.ID, 2)}, Finish: finishJob(p.ID), Charge: b.app.PushCharge(p, 1, b.now)}
	last.To = sendstore.FanoutCursor{After: sendstore.DeviceCursor{Mapped: true, UserID: "u3", DeviceID: "d4"}, Seq: 4, Chunk: 3, Users: 3}
	return p, first, last
}

func testStartPages(t *testing.T, b *bundle) {
	p, first, last := b.pagedTopicPush()
	b.start(p.ID, first)
	if to, done, err := b.s.FanoutProgress(b.ctx, p.ID); err != nil || done || to != first.To {
		t.Errorf("after the first page: got (%+v, %v, %v), want (%+v, false, nil)", to, done, err, first.To)
	}
	// The first page's chunks complete before the last page: no finish yet.
	for chunk := range 2 {
		b.complete(p.ID, chunk, false)
	}
	b.wantJobs(finishJob(p.ID).Kind(), 0)
	b.start(p.ID, last)
	if to, done, err := b.s.FanoutProgress(b.ctx, p.ID); err != nil || !done || to != last.To {
		t.Errorf("after the last page: got (%+v, %v, %v), want (%+v, true, nil)", to, done, err, last.To)
	}
	b.wantJobs(sendJob(p.ID, 2).Kind(), 1)
	b.wantJobs(finishJob(p.ID).Kind(), 0)
	b.complete(p.ID, 2, true)
	b.wantJobs(finishJob(p.ID).Kind(), 0) // the caller finishes it
	got := b.pushOf(p.ID)
	if got.RequestedUsers != 3 || got.ServerActionsHalf != 3 || got.Counts.Tokens != 4 {
		t.Errorf("push: got %d users, %d half charged, %d tokens, want 3, 3, 4", got.RequestedUsers, got.ServerActionsHalf, got.Counts.Tokens)
	}
	if u := b.usageOn(b.app.ID, today); u != 3 {
		t.Errorf("usage: got %d, want 3", u)
	}
	if ds := b.deliveries(p.ID); len(ds) != 4 {
		t.Errorf("deliveries: got %d, want 4", len(ds))
	}
}

func testStartStalePage(t *testing.T, b *bundle) {
	p, first, last := b.pagedTopicPush()
	b.start(p.ID, first)
	// The first page again, as a second run would: the push started.
	if started, err := b.s.StartSending(b.ctx, p.ID, first); err != nil || started {
		t.Errorf("first page again: got (%v, %v), want (false, nil)", started, err)
	}
	b.start(p.ID, last)
	// The last page again: the fan-out moved past it.
	if started, err := b.s.StartSending(b.ctx, p.ID, last); err != nil || started {
		t.Errorf("last page again: got (%v, %v), want (false, nil)", started, err)
	}
	// A page from somewhere else: not where the fan-out stands.
	stray := last
	stray.From.Seq = 1
	if started, err := b.s.StartSending(b.ctx, p.ID, stray); err != nil || started {
		t.Errorf("stray page: got (%v, %v), want (false, nil)", started, err)
	}
	got := b.pushOf(p.ID)
	if got.Counts.Tokens != 4 || got.ServerActionsHalf != 3 {
		t.Errorf("push: got %d tokens, %d half charged, want 4 and 3", got.Counts.Tokens, got.ServerActionsHalf)
	}
	b.wantJobs(sendJob(p.ID, 2).Kind(), 1)
}

func testStartLastPageFinishes(t *testing.T, b *bundle) {
	p, first, _ := b.pagedTopicPush()
	b.start(p.ID, first)
	for chunk := range 2 {
		b.complete(p.ID, chunk, false)
	}
	// The last page finds no more devices: nothing is open, so it queues
	// the finish itself.
	empty := sendstore.Fanout{From: first.To, To: first.To, Finish: finishJob(p.ID)}
	b.start(p.ID, empty)
	b.wantJobs(finishJob(p.ID).Kind(), 1)
}

func testDeliveriesOf(t *testing.T, b *bundle) {
	p, first, last := b.pagedTopicPush()
	last.Deliveries[0].State = herald.DeliverySuppressedConsent // a row
	b.start(p.ID, first)
	b.start(p.ID, last)
	ds, err := b.s.DeliveriesOf(b.ctx, p.ID, []string{"u1", "u3"})
	must(t, "DeliveriesOf", err)
	var got []string
	for _, d := range ds {
		got = append(got, d.DeviceID+"/"+string(d.State))
	}
	if want := []string{"d1/pending", "d2/pending", "d4/suppressed_consent"}; !equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if ds, err := b.s.DeliveriesOf(b.ctx, p.ID, nil); err != nil || len(ds) != 0 {
		t.Errorf("no users: got (%d, %v), want none", len(ds), err)
	}
	if us, err := b.s.UndeliverableUsers(b.ctx, p.ID); err != nil || len(us) != 0 {
		t.Errorf("UndeliverableUsers before: got (%v, %v), want none", us, err)
	}
	// d1 and d2 (both u1's) and d3 (u2's) marked, then settled undeliverable.
	b.advance(p.ID, step(rng(0, 0), rng(0, 2)), 2)
	b.advance(p.ID, sendstore.ChunkStep{Chunk: 1, New: rng(0, 1)}, 1)
	for _, st := range []sendstore.ChunkStep{{Old: rng(0, 2), New: rng(2, 2), Rows: first.Deliveries[:2]},
		{Chunk: 1, Old: rng(0, 1), New: rng(1, 1), Rows: first.Deliveries[2:3]}} {
		for i := range st.Rows {
			st.Rows[i].State, st.Rows[i].Reason = herald.DeliveryUndeliverable, herald.ReasonNoToken
		}
		b.advance(p.ID, st, st.New.Marked)
	}
	if us, err := b.s.UndeliverableUsers(b.ctx, p.ID); err != nil || !equal(us, []string{"u1", "u2"}) {
		t.Errorf("UndeliverableUsers: got (%v, %v), want [u1 u2]", us, err)
	}
}
