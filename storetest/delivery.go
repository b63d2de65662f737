package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

var deliveryTests = append([]test{
	{"DevicesByID", testDevicesByID},
	{"DevicesOfUsers", testDevicesOfUsers},
	{"AllDevices", testAllDevices},
	{"StartSending/Records", testStartRecords},
	{"StartSending/Once", testStartOnce},
	{"StartSending/Scheduled", testStartScheduled},
	{"StartSending/NotWaiting", testStartNotWaiting},
	{"StartSending/TargetedChargesAtFanout", testStartTargeted},
	{"StartSending/UnknownPush", testStartUnknown},
	{"Push/Counts", testPushCounts},
	{"CompleteChunk/FinishAfterLast", testCompleteChunk},
	{"FailPush", testFailPush},
	{"FinishPush/Once", testFinishOnce},
	{"FinishPush/FailedStaysFailed", testFinishFailed},
	{"FinishPush/ErrNotFound", testFinishUnknown},
}, append(append(chunkTests, fanoutTests...), tokenTests...)...)

// plan returns one pending delivery per device, size to a chunk, its
// recipient index that of the device's user in order of appearance.
func plan(devices []herald.Device, size int) []herald.Delivery {
	var users []string
	ds := make([]herald.Delivery, len(devices))
	for i, d := range devices {
		user := *d.UserID
		idx := slices.Index(users, user)
		if idx < 0 {
			idx, users = len(users), append(users, user)
		}
		ds[i] = herald.Delivery{Seq: i, RecipientIdx: idx, UserID: user, DeviceID: d.ID, Token: d.Token, Platform: d.Platform,
			AppSourceVersion: d.AppSourceVersion, TokenUpdatedAt: d.TokenUpdatedAt, Chunk: i / size, State: herald.DeliveryPending}
	}
	return ds
}

// fanout is the fan-out of ds: a send job per chunk with an open delivery.
func fanout(pushID string, ds []herald.Delivery) sendstore.Fanout {
	f := sendstore.Fanout{Deliveries: ds}
	seen := map[int]bool{}
	for _, d := range ds {
		if !d.State.Final() && !seen[d.Chunk] {
			seen[d.Chunk] = true
			f.Jobs = append(f.Jobs, sendJob(pushID, d.Chunk))
		}
	}
	return f
}

// sending accepts a push to users, registers one device per user (dN with
// token tN, mapped to uN) and starts it with chunks of size deliveries.
func (b *bundle) sending(users int, size int) (herald.Push, []herald.Delivery) {
	b.t.Helper()
	var names []string
	var devices []herald.Device
	for i := range users {
		n := itoa(i + 1)
		names = append(names, "u"+n)
		devices = append(devices, b.register("d"+n, "t"+n, "u"+n))
	}
	p := b.acceptUsers(names...)
	ds := plan(devices, size)
	b.start(p.ID, fanout(p.ID, ds))
	return p, ds
}

// start records a fan-out that must start the push.
func (b *bundle) start(pushID string, f sendstore.Fanout) {
	b.t.Helper()
	started, err := b.s.StartSending(b.ctx, pushID, f)
	if err != nil || !started {
		b.t.Fatalf("StartSending: got (%v, %v), want (true, nil)", started, err)
	}
}

// deliveries returns a push's deliveries by seq.
func (b *bundle) deliveries(pushID string) map[int]herald.Delivery {
	b.t.Helper()
	ds, err := b.s.Deliveries(b.ctx, pushID)
	if err != nil {
		b.t.Fatalf("Deliveries: %v", err)
	}
	out := make(map[int]herald.Delivery, len(ds))
	for _, d := range ds {
		out[d.Seq] = d
	}
	return out
}

// advance writes a step of the push's chunk and fails unless the chunk's
// in-flight range then ends at want, the push still sending.
func (b *bundle) advance(pushID string, st sendstore.ChunkStep, want int) {
	b.t.Helper()
	got, stopped, err := b.s.AdvanceChunk(b.ctx, b.app.ID, pushID, st)
	if err != nil || got != want || stopped {
		b.t.Fatalf("AdvanceChunk %+v: got (%d, %v, %v), want (%d, false, nil)", st, got, stopped, err, want)
	}
}

func testStartRecords(t *testing.T, b *bundle) {
	d1, d2 := b.register("d1", "t1", "u1"), b.register("d2", "t2", "u1")
	d3, d4 := b.register("d3", "t3", "u2"), b.register("d4", "t4", "u3")
	p := b.acceptUsers("u1", "u2", "u3")
	ds := plan([]herald.Device{d1, d2, d3, d4}, 2)
	ds[3].State, ds[3].Chunk = herald.DeliverySuppressedConsent, 0
	b.tick(time.Second)
	b.start(p.ID, fanout(p.ID, ds))

	got, err := b.s.Deliveries(b.ctx, p.ID)
	must(t, "Deliveries", err)
	if len(got) != 4 {
		t.Fatalf("got %d deliveries, want 4", len(got))
	}
	for i, want := range ds {
		g := got[i]
		if g.Seq != want.Seq || g.RecipientIdx != want.RecipientIdx || g.UserID != want.UserID || g.DeviceID != want.DeviceID ||
			g.Token != want.Token || g.Platform != want.Platform || g.AppSourceVersion != want.AppSourceVersion ||
			!g.TokenUpdatedAt.Equal(want.TokenUpdatedAt) || g.Chunk != want.Chunk || g.State != want.State ||
			g.Attempts != 0 || g.Resent {
			t.Errorf("delivery %d: got %+v, want %+v", i, g, want)
		}
	}
	rec := b.pushOf(p.ID)
	if rec.Status != herald.StatusSending || rec.StartedAt == nil || !rec.StartedAt.Equal(b.now) {
		t.Errorf("push: got %s started %v, want sending, started now", rec.Status, rec.StartedAt)
	}
	b.wantJobs(sendJob(p.ID, 0).Kind(), 1)
	b.wantJobs(sendJob(p.ID, 1).Kind(), 1)
}

func testStartOnce(t *testing.T, b *bundle) {
	p, ds := b.sending(3, 2)
	started, err := b.s.StartSending(b.ctx, p.ID, fanout(p.ID, ds))
	if err != nil || started {
		t.Errorf("again: got (%v, %v), want (false, nil)", started, err)
	}
	if got := b.deliveries(p.ID); len(got) != 3 {
		t.Errorf("deliveries: got %d, want 3", len(got))
	}
	b.wantJobs(sendJob(p.ID, 0).Kind(), 1)
	b.wantJobs(sendJob(p.ID, 1).Kind(), 1)
}

func testStartScheduled(t *testing.T, b *bundle) {
	d := b.register("d1", "t1", "u1")
	p := b.acceptScheduled(b.now.Add(time.Hour).Truncate(time.Minute), "u1")
	b.setNow(*p.ScheduledAt)
	b.start(p.ID, fanout(p.ID, plan([]herald.Device{d}, 10)))
	if got := b.pushOf(p.ID); got.Status != herald.StatusSending || got.StartedAt == nil || !got.StartedAt.Equal(b.now) {
		t.Errorf("got %s started %v, want sending, started now", got.Status, got.StartedAt)
	}
}

func testStartNotWaiting(t *testing.T, b *bundle) {
	d := b.register("d1", "t1", "u1")
	cancelled := b.acceptScheduled(b.now.Add(time.Hour).Truncate(time.Minute), "u1")
	_, err := b.cancel(cancelled.ID)
	must(t, "CancelScheduled", err)
	finished := b.acceptUsers("u1")
	_, err = b.s.FinishPush(b.ctx, finished.ID, nil, nil)
	must(t, "FinishPush", err)
	for name, id := range map[string]string{"cancelled": cancelled.ID, "finished": finished.ID} {
		started, err := b.s.StartSending(b.ctx, id, fanout(id, plan([]herald.Device{d}, 10)))
		if err != nil || started {
			t.Errorf("%s: got (%v, %v), want (false, nil)", name, started, err)
		}
		if ds := b.deliveries(id); len(ds) != 0 {
			t.Errorf("%s: got %d deliveries, want none", name, len(ds))
		}
		b.wantJobs(sendJob(id, 0).Kind(), 0)
	}
	if st := b.pushOf(cancelled.ID).Status; st != herald.StatusCancelled {
		t.Errorf("cancelled push: got %s, want cancelled", st)
	}
}

func testStartTargeted(t *testing.T, b *bundle) {
	d1, d2 := b.register("d1", "t1", "u1"), b.register("d2", "t2", "u2")
	p, _ := b.newPush()
	p.Kind, p.Topic = herald.KindTopic, "news"
	b.accept(p, nil)
	// The fan-out happens on the next local day: it is charged then.
	b.setNow(time.Date(2025, 6, 11, 16, 0, 0, 0, time.UTC))
	f := fanout(p.ID, plan([]herald.Device{d1, d2}, 10))
	f.To.Users, f.Charge = 2, b.app.PushCharge(p, 2, b.now)
	b.start(p.ID, f)
	got := b.pushOf(p.ID)
	if got.RequestedUsers != 2 || got.ServerActionsHalf != 2 || got.Counts.RequestedUsers != 2 {
		t.Errorf("push: got %d users charged %d, want 2 and 2", got.RequestedUsers, got.ServerActionsHalf)
	}
	if a, z := b.usageOn(b.app.ID, today), b.usageOn(b.app.ID, "2025-06-12"); a != 0 || z != 2 {
		t.Errorf("usage: got %d on %s and %d on 2025-06-12, want 0 and 2", a, today, z)
	}
}

func testStartUnknown(t *testing.T, b *bundle) {
	started, err := b.s.StartSending(b.ctx, "push_missing", sendstore.Fanout{Jobs: []herald.Job{sendJob("push_missing", 0)}})
	wantErr(t, "unknown push", err, herald.ErrNotFound)
	if started {
		t.Errorf("got started, want not")
	}
	b.wantJobs(sendJob("push_missing", 0).Kind(), 0)
}

func testPushCounts(t *testing.T, b *bundle) {
	var devices []herald.Device
	for i := range 6 {
		n := itoa(i + 1)
		devices = append(devices, b.register("d"+n, "t"+n, "u"+n))
	}
	p := b.acceptUsers("u1", "u2", "u3", "u4", "u5", "u6", "u7")
	ds := plan(devices, 10)
	ds[4].State, ds[5].State = herald.DeliverySuppressedConsent, herald.DeliverySuppressedNight
	ds[0].OldForBadge, ds[0].OldForImage, ds[1].OldForBadge = true, true, true
	b.start(p.ID, fanout(p.ID, ds))
	// Seq 0 sent (its device too old for both), 1 failed (too old for the
	// badge: not counted, it was not sent), 2 dead; 3 still to send.
	failed, dead := ds[1], ds[2]
	failed.State, failed.Error = herald.DeliveryFailed, "x"
	dead.State, dead.Reason = herald.DeliveryUndeliverable, herald.ReasonTokenExpired
	b.advance(p.ID, step(rng(0, 0), rng(0, 3)), 3)
	b.advance(p.ID, sendstore.ChunkStep{Old: rng(0, 3), New: rng(3, 3), Rows: []herald.Delivery{failed, dead}, SentOldBadge: 1, SentOldImage: 1}, 3)
	_, err := b.s.FinishPush(b.ctx, p.ID, []herald.Unreachable{{UserID: "u3", Reason: herald.ReasonTokenExpired},
		{UserID: "u7", Reason: herald.ReasonNoToken}}, nil)
	must(t, "FinishPush", err)
	want := herald.Counts{RequestedUsers: 7, Tokens: 6, Sent: 1, Failed: 2, SuppressedConsent: 1, SuppressedNight: 1,
		Unreachable: 2, BadgeUnsupported: 1, ImageUnsupported: 1}
	if got := b.pushOf(p.ID).Counts; got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func testCompleteChunk(t *testing.T, b *bundle) {
	p, _ := b.sending(3, 1)
	// The last chunk completed leaves the push to finish; so does any
	// completion again until it has finished (a run after a crash
	// between the completion and the finish). The store queues no finish.
	for _, step := range []struct {
		chunk int
		left  bool
	}{{1, false}, {1, false}, {0, false}, {2, true}, {2, true}, {0, true}} {
		b.complete(p.ID, step.chunk, step.left)
	}
	b.wantJobs(finishJob(p.ID).Kind(), 0)
	_, err := b.s.FinishPush(b.ctx, p.ID, nil, nil)
	must(t, "FinishPush", err)
	b.complete(p.ID, 2, false)
}

func testFailPush(t *testing.T, b *bundle) {
	p, _ := b.sending(3, 2)
	// Chunk 0: seq 0 sent, seq 1 in flight; chunk 1 (seq 2) not begun.
	b.advance(p.ID, step(rng(0, 0), rng(0, 2)), 2)
	b.advance(p.ID, step(rng(0, 2), rng(1, 2)), 2)
	finish := finishJob(p.ID)
	must(t, "FailPush", b.s.FailPush(b.ctx, p.ID, "invalid_grant", finish))
	got := b.deliveries(p.ID)
	if got[0].State != herald.DeliverySent {
		t.Errorf("sent delivery: got %s, want sent kept", got[0].State)
	}
	for _, seq := range []int{1, 2} {
		if got[seq].State != herald.DeliveryFailed || got[seq].Error != "invalid_grant" {
			t.Errorf("open delivery %d: got %s %q, want failed with the reason", seq, got[seq].State, got[seq].Error)
		}
	}
	if rec := b.pushOf(p.ID); rec.Status != herald.StatusFailed || rec.FailureReason != "invalid_grant" {
		t.Errorf("push: got %s %q, want failed with the reason", rec.Status, rec.FailureReason)
	}
	b.wantJobs(finish.Kind(), 1)
	must(t, "FailPush again", b.s.FailPush(b.ctx, p.ID, "again", finish))
	b.complete(p.ID, 1, true)
	b.wantJobs(finish.Kind(), 1)
	if rec := b.pushOf(p.ID); rec.FailureReason != "invalid_grant" {
		t.Errorf("reason: got %q, want the first kept", rec.FailureReason)
	}
	for chunk := range 2 {
		if w, err := b.s.ResumeChunk(b.ctx, p.ID, chunk); err != nil || len(w.Slots) != 0 || !w.Stopped {
			t.Errorf("chunk %d: got (%+v, %v), want nothing left to send", chunk, w, err)
		}
	}
	if c := b.pushOf(p.ID).Counts; c.Tokens != 3 || c.Sent != 1 || c.Failed != 2 {
		t.Errorf("counts: got %+v, want 3 tokens, 1 sent, 2 failed", c)
	}
	fs, err := b.s.Failures(b.ctx, p.ID)
	if err != nil || len(fs) != 2 || fs[0].UserID != "u2" || fs[1].UserID != "u3" || fs[0].Error != "invalid_grant" {
		t.Errorf("Failures: got (%+v, %v), want u2 and u3 failed with the reason", fs, err)
	}
	// A finished push is not failed.
	done := b.acceptUsers("u1")
	_, err = b.s.FinishPush(b.ctx, done.ID, nil, nil)
	must(t, "FinishPush", err)
	must(t, "FailPush done", b.s.FailPush(b.ctx, done.ID, "late", finishJob(done.ID)))
	if st := b.pushOf(done.ID).Status; st != herald.StatusDone {
		t.Errorf("finished push: got %s, want done", st)
	}
	b.wantJobs(finishJob(done.ID).Kind(), 0)
}

func testFinishOnce(t *testing.T, b *bundle) {
	p, _ := b.sending(1, 10)
	b.tick(time.Minute)
	unreachable := []herald.Unreachable{{UserID: "u1", Reason: herald.ReasonAppDeleted}, {UserID: "u2", Reason: herald.ReasonNoToken}}
	follow := []herald.Job{webhookJob(p.ID, 0), webhookJob(p.ID, 1)}
	finished, err := b.s.FinishPush(b.ctx, p.ID, unreachable, follow)
	if err != nil || !finished {
		t.Fatalf("got (%v, %v), want (true, nil)", finished, err)
	}
	rec := b.pushOf(p.ID)
	if rec.Status != herald.StatusDone || rec.FinishedAt == nil || !rec.FinishedAt.Equal(b.now) {
		t.Errorf("push: got %s finished %v, want done now", rec.Status, rec.FinishedAt)
	}
	b.tick(time.Minute)
	finished, err = b.s.FinishPush(b.ctx, p.ID, []herald.Unreachable{{UserID: "u3", Reason: herald.ReasonNoToken}}, follow)
	if err != nil || finished {
		t.Errorf("again: got (%v, %v), want (false, nil)", finished, err)
	}
	for i := range follow {
		b.wantJobs(webhookJob(p.ID, i).Kind(), 1)
	}
	got, err := b.s.UnreachableUsersOf(b.ctx, p.ID)
	if err != nil || !slices.Equal(sortedUnreachable(got), unreachable) {
		t.Errorf("unreachable: got (%v, %v), want %v", got, err, unreachable)
	}
	if again := b.pushOf(p.ID); !again.FinishedAt.Equal(*rec.FinishedAt) {
		t.Errorf("finish time: got %v, want %v kept", again.FinishedAt, rec.FinishedAt)
	}
	// A push that never fanned out (nothing to send) finishes too.
	empty := b.acceptUsers("nobody")
	if finished, err := b.s.FinishPush(b.ctx, empty.ID, nil, nil); err != nil || !finished {
		t.Errorf("without fan-out: got (%v, %v), want (true, nil)", finished, err)
	}
	if rec := b.pushOf(empty.ID); rec.Status != herald.StatusDone || rec.FinishedAt == nil {
		t.Errorf("without fan-out: got %s finished %v, want done", rec.Status, rec.FinishedAt)
	}
}

func testFinishFailed(t *testing.T, b *bundle) {
	p, _ := b.sending(1, 10)
	must(t, "FailPush", b.s.FailPush(b.ctx, p.ID, "invalid_grant", finishJob(p.ID)))
	if finished, err := b.s.FinishPush(b.ctx, p.ID, nil, nil); err != nil || !finished {
		t.Errorf("got (%v, %v), want (true, nil)", finished, err)
	}
	if rec := b.pushOf(p.ID); rec.Status != herald.StatusFailed || rec.FinishedAt == nil {
		t.Errorf("got %s finished %v, want failed with a finish time", rec.Status, rec.FinishedAt)
	}
}

func testFinishUnknown(t *testing.T, b *bundle) {
	_, err := b.s.FinishPush(b.ctx, "push_missing", nil, []herald.Job{webhookJob("push_missing", 0)})
	wantErr(t, "unknown push", err, herald.ErrNotFound)
	b.wantJobs(webhookJob("push_missing", 0).Kind(), 0)
}

// sortedUnreachable returns us sorted by user.
func sortedUnreachable(us []herald.Unreachable) []herald.Unreachable {
	out := slices.Clone(us)
	slices.SortFunc(out, func(a, b herald.Unreachable) int {
		if a.UserID < b.UserID {
			return -1
		}
		if a.UserID > b.UserID {
			return 1
		}
		return 0
	})
	return out
}

func testDevicesByID(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	b.register("d2", "t2", "")
	other := b.newApp("other")
	_, err := b.s.RegisterDevice(b.ctx, other.ID, registration("d3", "t3", ""))
	must(t, "RegisterDevice", err)
	m, err := b.s.DevicesByID(b.ctx, b.app.ID, []string{"d1", "d2", "d3", "ghost"})
	must(t, "DevicesByID", err)
	if len(m) != 2 || m["d1"].Token != "t1" || m["d2"].Token != "t2" || m["d1"].UserID == nil || *m["d1"].UserID != "u1" {
		t.Errorf("got %+v, want d1 and d2 only", m)
	}
	if m, err := b.s.DevicesByID(b.ctx, b.app.ID, nil); err != nil || len(m) != 0 {
		t.Errorf("none asked: got (%v, %v), want none", m, err)
	}
}

func testDevicesOfUsers(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	b.register("d2", "t2", "u1")
	b.register("d3", "t3", "u2")
	b.register("d4", "t4", "")
	m, err := b.s.DevicesOfUsers(b.ctx, b.app.ID, []string{"u1", "u2", "nobody"})
	must(t, "DevicesOfUsers", err)
	if !equal(deviceIDs(m["u1"]), []string{"d1", "d2"}) || !equal(deviceIDs(m["u2"]), []string{"d3"}) || len(m["nobody"]) != 0 {
		t.Errorf("got u1 %v, u2 %v, nobody %v; want [d1 d2], [d3], none", deviceIDs(m["u1"]), deviceIDs(m["u2"]), deviceIDs(m["nobody"]))
	}
	if d := m["u1"][0]; d.Token == "" || d.Platform == "" || d.TokenUpdatedAt.IsZero() {
		t.Errorf("device fields: got %+v, want token, platform and refresh time", d)
	}
	// Another app's user of the same id is not this app's; a user asked
	// twice has each device once; a list longer than one query's batch
	// (512) is read whole.
	other := b.newApp("other")
	_, err = b.s.RegisterDevice(b.ctx, other.ID, registration("d5", "t5", "u1"))
	must(t, "RegisterDevice", err)
	users := []string{"u1", "u1"}
	for i := range 600 {
		users = append(users, fmt.Sprintf("ghost%d", i))
	}
	m, err = b.s.DevicesOfUsers(b.ctx, b.app.ID, append(users, "u2", "u1"))
	must(t, "DevicesOfUsers", err)
	if !equal(deviceIDs(m["u1"]), []string{"d1", "d2"}) || !equal(deviceIDs(m["u2"]), []string{"d3"}) || len(m) != 2 {
		t.Errorf("repeated and many users: got u1 %v, u2 %v, %d users; want [d1 d2], [d3], 2", deviceIDs(m["u1"]), deviceIDs(m["u2"]), len(m))
	}
}

func testAllDevices(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	b.register("d2", "t2", "")
	other := b.newApp("other")
	_, err := b.s.RegisterDevice(b.ctx, other.ID, registration("d3", "t3", ""))
	must(t, "RegisterDevice", err)
	ds, err := b.allDevices(b.app.ID)
	if err != nil || !equal(deviceIDs(ds), []string{"d1", "d2"}) {
		t.Errorf("got (%v, %v), want [d1 d2]", deviceIDs(ds), err)
	}
}
