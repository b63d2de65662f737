package delivery

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// TestPlanDefer: a marketing push with nightPolicy defer, fanned out in
// the night, sends night-consent devices at once, suppresses devices
// without marketing consent, and puts the rest in chunks of their own
// after the others, refunding on cancel only users sent nothing else.
func TestPlanDefer(t *testing.T) {
	t.Parallel()
	uid := func(s string) *string { return &s }
	dev := func(id, user string, c herald.Consent) herald.Device {
		return herald.Device{ID: id, Token: "tok-" + id, UserID: uid(user), Consent: c}
	}
	all, day, none := herald.Consent{Marketing: true, MarketingNight: true}, herald.Consent{Marketing: true}, herald.Consent{}
	groups := []recipientDevices{
		{r: herald.Recipient{UserID: "a"}, idx: 0, devices: []herald.Device{dev("a1", "a", all), dev("a2", "a", day)}},  // one now, one deferred: no refund
		{r: herald.Recipient{UserID: "b"}, idx: 1, devices: []herald.Device{dev("b1", "b", day), dev("b2", "b", day)}},  // both deferred: refund 1
		{r: herald.Recipient{UserID: "c"}, idx: 2, devices: []herald.Device{dev("c1", "c", none)}},                      // suppressed by consent
		{r: herald.Recipient{UserID: "d"}, idx: 3, devices: []herald.Device{dev("d1", "d", day), dev("d2", "d", none)}}, // deferred and suppressed: refund 1
		{r: herald.Recipient{UserID: "e"}, idx: 4, devices: []herald.Device{dev("e1", "e", all)}},
	}
	morning := time.Date(2027, 1, 6, 8, 0, 0, 0, time.UTC)
	atNight, byDay := nightRule{now: morning.Add(-time.Hour), loc: time.UTC, charged: true}, nightRule{now: morning.Add(4 * time.Hour), loc: time.UTC, charged: true}
	ad := herald.Push{Content: herald.Content{Title: "(광고) sale"}, NightPolicy: herald.NightDefer, Kind: herald.KindUsers}

	t.Run("Night", func(t *testing.T) {
		to := sendstore.FanoutCursor{Seq: 3, Chunk: 2}
		ds, deferred, _ := plan(ad, groups, atNight, 2, &to)
		type want struct {
			state herald.DeliveryState
			chunk int
		}
		wants := []want{{herald.DeliveryPending, 2}, {herald.DeliveryPending, 3}, {herald.DeliveryPending, 3}, {herald.DeliveryPending, 4},
			{herald.DeliverySuppressedConsent, 0}, {herald.DeliveryPending, 4}, {herald.DeliverySuppressedConsent, 0}, {herald.DeliveryPending, 2}}
		if len(ds) != len(wants) {
			t.Fatalf("got %d deliveries, want %d", len(ds), len(wants))
		}
		for i, d := range ds {
			if d.State != wants[i].state || d.Chunk != wants[i].chunk || d.Seq != 3+i {
				t.Errorf("delivery %d (%s): got %s chunk %d seq %d, want %s chunk %d seq %d", i, d.DeviceID, d.State, d.Chunk, d.Seq,
					wants[i].state, wants[i].chunk, 3+i)
			}
		}
		// a2 b1 | b2 d1: b refunded in chunk 3 (its first deferred device), d in chunk 4.
		wantDeferred := []sendstore.DeferredChunk{{Chunk: 3, Until: morning, RefundHalf: 1}, {Chunk: 4, Until: morning, RefundHalf: 1}}
		if len(deferred) != len(wantDeferred) || deferred[0] != wantDeferred[0] || deferred[1] != wantDeferred[1] {
			t.Errorf("deferred: got %+v, want %+v", deferred, wantDeferred)
		}
		if to.Seq != 11 || to.Chunk != 5 {
			t.Errorf("cursor: got seq %d chunk %d, want 11 and 5", to.Seq, to.Chunk)
		}
	})
	t.Run("Day", func(t *testing.T) {
		var to sendstore.FanoutCursor
		ds, deferred, _ := plan(ad, groups, byDay, 10, &to)
		if len(deferred) != 0 || to.Chunk != 1 {
			t.Fatalf("by day: got deferred %+v and %d chunks, want none and 1", deferred, to.Chunk)
		}
		for _, d := range ds {
			if d.State != herald.DeliveryPending && d.State != herald.DeliverySuppressedConsent {
				t.Errorf("%s: got %s by day", d.DeviceID, d.State)
			}
		}
	})
	t.Run("Skip", func(t *testing.T) {
		var to sendstore.FanoutCursor
		skip := ad
		skip.NightPolicy = herald.NightSkip
		ds, deferred, _ := plan(skip, groups, atNight, 10, &to)
		if len(deferred) != 0 || ds[1].State != herald.DeliverySuppressedNight {
			t.Fatalf("skip: got deferred %+v, a2 %s, want none and suppressed_night", deferred, ds[1].State)
		}
	})
	t.Run("NotCharged", func(t *testing.T) {
		var to sendstore.FanoutCursor
		_, deferred, _ := plan(ad, groups, nightRule{now: atNight.now, loc: time.UTC}, 10, &to)
		if len(deferred) != 1 || deferred[0].RefundHalf != 0 {
			t.Fatalf("a push not charged: got %+v, want one chunk refunding nothing", deferred)
		}
	})
	t.Run("UserFromThePageBefore", func(t *testing.T) {
		// A topic page whose first group continues the user of the page
		// before (charged there): not refunded here.
		var to sendstore.FanoutCursor
		topic := ad
		topic.Kind = herald.KindTopic
		_, deferred, _ := plan(topic, groups[1:2], nightRule{now: atNight.now, loc: time.UTC, charged: true, newFrom: 2}, 10, &to)
		if len(deferred) != 1 || deferred[0].RefundHalf != 0 {
			t.Fatalf("got %+v, want one chunk refunding nothing", deferred)
		}
	})
}

// TestDeferJobs: the send jobs of deferred chunks wait for their morning
// on the service's clock, which River shares.
func TestDeferJobs(t *testing.T) {
	t.Parallel()
	now := time.Date(2027, 1, 6, 1, 0, 0, 0, time.UTC)
	s := New(Config{Now: func() time.Time { return now }})
	morning := now.Add(7 * time.Hour)
	f := sendstore.Fanout{Jobs: []herald.Job{SendArgs{PushID: "p", Chunk: 0}, SendArgs{PushID: "p", Chunk: 1}},
		Deferred: []sendstore.DeferredChunk{{Chunk: 1, Until: morning}}}
	s.deferJobs(&f)
	first, second := f.Jobs[0].(SendArgs), f.Jobs[1].(SendArgs)
	if !first.Morning.IsZero() || !first.InsertOpts().ScheduledAt.IsZero() {
		t.Errorf("chunk 0: got %+v, want sent at once", first)
	}
	if !second.Morning.Equal(morning) || !second.RunAt.Equal(morning) {
		t.Errorf("chunk 1: got at %v runAt %v, want %v for both", second.Morning, second.RunAt, morning)
	}
	if opts := second.InsertOpts(); opts.Queue != QueueSend || !opts.ScheduledAt.Equal(second.RunAt.Add(-schedulerSlack)) {
		t.Errorf("chunk 1 insert options: got %+v", opts)
	}
}

// TestUntilMorning: a deferred chunk's job snoozes while its morning is
// far, waits when it is near, and goes at once after it.
func TestUntilMorning(t *testing.T) {
	t.Parallel()
	now := time.Date(2027, 1, 6, 7, 0, 0, 0, time.UTC)
	s := New(Config{Now: func() time.Time { return now }})
	ctx := context.Background()
	if err := s.untilMorning(ctx, SendArgs{}); err != nil {
		t.Errorf("not deferred: got %v", err)
	}
	if err := s.untilMorning(ctx, SendArgs{Morning: now.Add(-time.Second)}); err != nil {
		t.Errorf("past its time: got %v", err)
	}
	var snooze *river.JobSnoozeError
	if err := s.untilMorning(ctx, SendArgs{Morning: now.Add(time.Hour)}); !errors.As(err, &snooze) || snooze.Duration != time.Hour-schedulerSlack {
		t.Errorf("an hour early: got %v, want a snooze of %v", err, time.Hour-schedulerSlack)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.untilMorning(cancelled, SendArgs{Morning: now.Add(5 * time.Second)}); !errors.As(err, &snooze) {
		t.Errorf("near, job cancelled while waiting: got %v, want a snooze", err)
	}
}

// TestNightRuleFor: the rule of a fan-out page is judged at the service's
// time, so a scheduled push whose time falls in the night defers as an
// immediate one does; a topic page refunds only users new on it.
func TestNightRuleFor(t *testing.T) {
	t.Parallel()
	seoul, _ := time.LoadLocation("Asia/Seoul")
	app := herald.App{TimeZone: "Asia/Seoul"}
	for _, tc := range []struct {
		at      time.Time
		night   bool
		morning time.Time
	}{
		{time.Date(2027, 1, 5, 23, 30, 0, 0, seoul), true, time.Date(2027, 1, 6, 8, 0, 0, 0, seoul)},
		{time.Date(2027, 1, 6, 7, 59, 0, 0, seoul), true, time.Date(2027, 1, 6, 8, 0, 0, 0, seoul)},
		{time.Date(2027, 1, 6, 12, 0, 0, 0, seoul), false, time.Date(2027, 1, 7, 8, 0, 0, 0, seoul)},
	} {
		s := New(Config{Now: func() time.Time { return tc.at }})
		sendAt := tc.at
		p := herald.Push{Kind: herald.KindUsers, ScheduledAt: &sendAt, NightPolicy: herald.NightDefer}
		r := s.nightRuleFor(p, app, sendstore.FanoutCursor{Users: 7})
		if d := (herald.Device{}); r.night(d, tc.at) != tc.night || !r.morning(d, tc.at).Equal(tc.morning) || !r.charged || r.newFrom != 0 {
			t.Errorf("%v: got %+v, want night %v, morning %v, charged, all users new", tc.at, r, tc.night, tc.morning)
		}
		p.Kind = herald.KindTopic
		if r := s.nightRuleFor(p, app, sendstore.FanoutCursor{Users: 7}); r.newFrom != 7 {
			t.Errorf("topic page: got newFrom %d, want 7", r.newFrom)
		}
		p.Kind = herald.KindToken
		if r := s.nightRuleFor(p, app, sendstore.FanoutCursor{}); r.charged {
			t.Errorf("token push: got charged, want not")
		}
	}
}
