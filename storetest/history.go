package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

var historyTests = []test{
	{"Pushes/NewestFirstPaged", testPushesPaged},
	{"Pushes/Filters", testPushesFilters},
	{"Pushes/ScheduledSoonestFirstPaged", testPushesScheduled},
	{"Pushes/ErrMalformedCursor", testPushesBadCursor},
	{"Pushes/Empty", testPushesEmpty},
	{"PushGroup", testPushGroup},
	{"UnreachableUsersOf/UnknownPush", testUnreachableUnknown},
	{"Failures", testFailures},
	{"Usage/LocalDay", testUsageLocalDay},
	{"Usage/Range", testUsageRange},
}

// pages reads every page of f, limit pushes at a time, and returns the ids
// page by page.
func (b *bundle) pages(f herald.PushFilter) [][]string {
	b.t.Helper()
	var out [][]string
	for range 100 {
		ps, next, err := b.s.Pushes(b.ctx, b.app.ID, f)
		if err != nil {
			b.t.Fatalf("Pushes %+v: %v", f, err)
		}
		var ids []string
		for _, p := range ps {
			ids = append(ids, p.ID)
		}
		out = append(out, ids)
		if next == "" {
			return out
		}
		f.Cursor = next
	}
	b.t.Fatalf("Pushes: more than 100 pages")
	return nil
}

func pagesEqual(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func testPushesPaged(t *testing.T, b *bundle) {
	var ids []string
	var users []string
	for i := range 5 {
		users = append(users, "u"+itoa(i))
		ids = append(ids, b.acceptUsers(users...).ID)
		b.tick(time.Second)
	}
	want := [][]string{{ids[4], ids[3]}, {ids[2], ids[1]}, {ids[0]}}
	if got := b.pages(herald.PushFilter{Limit: 2}); !pagesEqual(got, want) {
		t.Errorf("got pages %v, want %v", got, want)
	}
	if got := b.pages(herald.PushFilter{Limit: 5}); !pagesEqual(got, [][]string{{ids[4], ids[3], ids[2], ids[1], ids[0]}}) {
		t.Errorf("one full page: got %v, want all five and no cursor", got)
	}
	ps, _, err := b.s.Pushes(b.ctx, b.app.ID, herald.PushFilter{Limit: 1})
	if err != nil || len(ps) != 1 || ps[0].Counts.RequestedUsers != 5 {
		t.Errorf("counts: got %+v (%v), want the newest push with its counts", ps, err)
	}
}

func testPushesFilters(t *testing.T, b *bundle) {
	group := func(g string) herald.Push {
		b.tick(time.Second)
		p, rs := b.newPush("u1")
		p.RequestGroupID = g
		return b.accept(p, rs)
	}
	g1, g2, plain, g1b := group("group-1"), group("group-2"), group(""), group("group-1")
	_, err := b.s.FinishPush(b.ctx, g1b.ID, nil, nil)
	must(t, "FinishPush", err)
	other := b.newApp("other")
	p, rs := b.newPush("u1")
	p.AppID, p.RequestGroupID = other.ID, "group-1"
	b.charge(&p, len(rs))
	_, _, err = b.s.AcceptPush(b.ctx, p, rs, nil, fanoutJob(p.ID))
	must(t, "AcceptPush other app", err)

	for _, c := range []struct {
		name string
		f    herald.PushFilter
		want []string
	}{
		{"all", herald.PushFilter{Limit: 10}, []string{g1b.ID, plain.ID, g2.ID, g1.ID}},
		{"group", herald.PushFilter{Limit: 10, RequestGroupID: "group-1"}, []string{g1b.ID, g1.ID}},
		{"status", herald.PushFilter{Limit: 10, Status: herald.StatusSending}, []string{plain.ID, g2.ID, g1.ID}},
		{"group and status", herald.PushFilter{Limit: 10, RequestGroupID: "group-1", Status: herald.StatusDone}, []string{g1b.ID}},
		{"paged group", herald.PushFilter{Limit: 1, RequestGroupID: "group-1"}, []string{g1b.ID, g1.ID}},
		{"unknown group", herald.PushFilter{Limit: 10, RequestGroupID: "group-9"}, nil},
	} {
		var got []string
		for _, page := range b.pages(c.f) {
			got = append(got, page...)
		}
		if !equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func testPushesScheduled(t *testing.T, b *bundle) {
	base := b.now.Truncate(time.Minute)
	at := func(min int) time.Time { return base.Add(time.Duration(min) * time.Minute) }
	// Made in another order than their send times; two share one.
	later := b.acceptScheduled(at(30), "u1")
	b.tick(time.Second)
	soon := b.acceptScheduled(at(10), "u1")
	b.tick(time.Second)
	tieA := b.acceptScheduled(at(20), "u1")
	b.tick(time.Second)
	tieB := b.acceptScheduled(at(20), "u1")
	b.tick(time.Second)
	gone := b.acceptScheduled(at(5), "u1")
	// Cancelled 5 minutes before its time, the last moment a cancel may.
	_, _, err := b.s.StepPush(b.ctx, gone.ID, herald.PushStep{Kind: herald.StepCancel, At: at(0)})
	must(t, "cancel", err)
	b.acceptUsers("u1")

	first, second := tieA.ID, tieB.ID
	if second < first {
		first, second = second, first
	}
	want := [][]string{{soon.ID, first}, {second, later.ID}}
	if got := b.pages(herald.PushFilter{Scheduled: true, Limit: 2}); !pagesEqual(got, want) {
		t.Errorf("got pages %v, want %v (soonest first, ties by id, only scheduled)", got, want)
	}
	var all []string
	for _, page := range b.pages(herald.PushFilter{Scheduled: true, Limit: 1}) {
		all = append(all, page...)
	}
	if !equal(all, []string{soon.ID, first, second, later.ID}) {
		t.Errorf("pages of one: got %v, want each scheduled push once", all)
	}
}

func testPushesBadCursor(t *testing.T, b *bundle) {
	b.acceptUsers("u1")
	b.acceptScheduled(b.now.Add(time.Hour), "u1")
	for name, f := range map[string]herald.PushFilter{
		"scheduled":     {Scheduled: true, Limit: 10, Cursor: "not-a-cursor"},
		"scheduled num": {Scheduled: true, Limit: 10, Cursor: "x.push_1"},
		"history":       {Limit: 10, Cursor: "not a cursor!"},
		"limit zero":    {},
	} {
		ps, next, err := b.s.Pushes(b.ctx, b.app.ID, f)
		wantErr(t, name, err, herald.ErrInvalidRequest)
		if len(ps) != 0 || next != "" {
			t.Errorf("%s: got %d pushes and cursor %q, want none", name, len(ps), next)
		}
	}
}

func testPushesEmpty(t *testing.T, b *bundle) {
	for name, appID := range map[string]string{"no pushes": b.app.ID, "unknown app": "app_missing"} {
		for _, scheduled := range []bool{false, true} {
			ps, next, err := b.s.Pushes(b.ctx, appID, herald.PushFilter{Scheduled: scheduled, Limit: 10})
			if err != nil || len(ps) != 0 || next != "" {
				t.Errorf("%s (scheduled %v): got (%d, %q, %v), want an empty page", name, scheduled, len(ps), next, err)
			}
		}
	}
}

func testPushGroup(t *testing.T, b *bundle) {
	var ids []string
	for i := range 3 {
		p, rs := b.newPush("u1", "u2")
		p.RequestGroupID = "group-1"
		if i == 1 {
			p.RequestGroupID = "group-2"
		}
		b.accept(p, rs)
		ids = append(ids, p.ID)
		b.tick(time.Second)
	}
	other := b.newApp("other")
	p, rs := b.newPush("u1")
	p.AppID, p.RequestGroupID = other.ID, "group-1"
	b.charge(&p, len(rs))
	_, _, err := b.s.AcceptPush(b.ctx, p, rs, nil, fanoutJob(p.ID))
	must(t, "AcceptPush other app", err)

	ps, err := b.s.PushGroup(b.ctx, b.app.ID, "group-1")
	must(t, "PushGroup", err)
	var got []string
	total := 0
	for _, p := range ps {
		got = append(got, p.ID)
		total += p.Counts.RequestedUsers
	}
	if len(got) != 2 || !(equal(got, []string{ids[0], ids[2]}) || equal(got, []string{ids[2], ids[0]})) || total != 4 {
		t.Errorf("got %v with %d requested users, want [%s %s] with 4", got, total, ids[0], ids[2])
	}
	if ps, err := b.s.PushGroup(b.ctx, b.app.ID, "group-9"); err != nil || len(ps) != 0 {
		t.Errorf("unknown group: got (%d, %v), want none", len(ps), err)
	}
}

func testUnreachableUnknown(t *testing.T, b *bundle) {
	if us, err := b.s.UnreachableUsersOf(b.ctx, "push_missing"); err != nil || len(us) != 0 {
		t.Errorf("got (%v, %v), want none", us, err)
	}
	p := b.acceptUsers("u1")
	if us, err := b.s.UnreachableUsersOf(b.ctx, p.ID); err != nil || len(us) != 0 {
		t.Errorf("unfinished push: got (%v, %v), want none", us, err)
	}
}

func testFailures(t *testing.T, b *bundle) {
	d1 := b.register("d1", "token-one-0000abcd1111", "u1")
	d2 := b.register("d2", "token-two-0000abcd2222", "u2")
	d3 := b.register("d3", "token-three-abcd3333", "u3")
	p := b.acceptUsers("u1", "u2", "u3")
	ds := plan([]herald.Device{d1, d2, d3}, 10)
	b.start(p.ID, fanout(p.ID, ds))
	ds[1].State, ds[1].Error = herald.DeliveryFailed, "QUOTA_EXCEEDED for an hour"
	ds[2].State, ds[2].Reason, ds[2].Error = herald.DeliveryUndeliverable, herald.ReasonAppDeleted, "UNREGISTERED"
	b.advance(p.ID, step(rng(0, 0), rng(0, 3)), 3)
	b.advance(p.ID, sendstore.ChunkStep{Old: rng(0, 3), New: rng(3, 3), Rows: ds[1:]}, 3)
	fs, err := b.s.Failures(b.ctx, p.ID)
	must(t, "Failures", err)
	if len(fs) != 2 {
		t.Fatalf("got %+v, want the failed and the undeliverable delivery", fs)
	}
	byUser := map[string]herald.Failure{fs[0].UserID: fs[0], fs[1].UserID: fs[1]}
	if f := byUser["u2"]; f.Token != herald.TokenSuffix(d2.Token) || !strings.Contains(f.Error, "QUOTA_EXCEEDED for an hour") {
		t.Errorf("u2: got %+v, want its token's suffix and error", f)
	}
	if f := byUser["u3"]; f.Token != herald.TokenSuffix(d3.Token) || !strings.Contains(f.Error, "UNREGISTERED") {
		t.Errorf("u3: got %+v, want its token's suffix and error", f)
	}
	for _, f := range fs {
		if strings.Contains(f.Token, "token-") {
			t.Errorf("%s: got the whole token %q, want only its suffix", f.UserID, f.Token)
		}
	}
	if fs, err := b.s.Failures(b.ctx, "push_missing"); err != nil || len(fs) != 0 {
		t.Errorf("unknown push: got (%v, %v), want none", fs, err)
	}
}

func testUsageLocalDay(t *testing.T, b *bundle) {
	// 23:59:59 and 00:00 in Seoul are two days; UTC sees one.
	b.setNow(time.Date(2025, 6, 11, 14, 59, 59, 0, time.UTC))
	b.acceptUsers("u1")
	b.setNow(time.Date(2025, 6, 11, 15, 0, 0, 0, time.UTC))
	b.acceptUsers("u1", "u2")
	la := b.app
	la.ID, la.APIKey, la.TimeZone = herald.NewID("app_", b.now), herald.NewAPIKey(), "America/Los_Angeles"
	must(t, "CreateApp", b.s.CreateApp(b.ctx, la))
	b.setNow(time.Date(2025, 6, 12, 6, 59, 0, 0, time.UTC)) // 23:59 on the 11th in Los Angeles
	p, rs := b.newPush("u1", "u2", "u3")
	p.AppID = la.ID
	b.charge(&p, len(rs))
	_, _, err := b.s.AcceptPush(b.ctx, p, rs, nil, fanoutJob(p.ID))
	must(t, "AcceptPush", err)

	us, err := b.s.Usage(b.ctx, b.app.ID, "2025-06-10", "2025-06-13")
	must(t, "Usage", err)
	if len(us) != 2 || us[0] != (herald.DayUsage{Date: "2025-06-11", Half: 1}) || us[1] != (herald.DayUsage{Date: "2025-06-12", Half: 2}) {
		t.Errorf("Seoul: got %+v, want 1 on 2025-06-11 and 2 on 2025-06-12", us)
	}
	us, err = b.s.Usage(b.ctx, la.ID, "2025-06-10", "2025-06-13")
	if err != nil || len(us) != 1 || us[0] != (herald.DayUsage{Date: "2025-06-11", Half: 3}) {
		t.Errorf("Los Angeles: got (%+v, %v), want 3 on 2025-06-11", us, err)
	}
}

func testUsageRange(t *testing.T, b *bundle) {
	for day := 10; day <= 14; day++ {
		b.setNow(time.Date(2025, 6, day, 3, 0, 0, 0, time.UTC))
		b.acceptUsers("u1")
	}
	us, err := b.s.Usage(b.ctx, b.app.ID, "2025-06-11", "2025-06-13")
	must(t, "Usage", err)
	var days []string
	for _, u := range us {
		days = append(days, u.Date)
		if u.Half != 1 {
			t.Errorf("%s: got %d, want 1", u.Date, u.Half)
		}
	}
	if !equal(days, []string{"2025-06-11", "2025-06-12", "2025-06-13"}) {
		t.Errorf("got days %v, want 11 to 13 inclusive, in order", days)
	}
	if us, err := b.s.Usage(b.ctx, "app_missing", "2025-06-01", "2025-06-30"); err != nil || len(us) != 0 {
		t.Errorf("unknown app: got (%v, %v), want none", us, err)
	}
}
