package storetest

import (
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

var pushTests = []test{
	{"AcceptPush/Stores", testAcceptStores},
	{"AcceptPush/Scheduled", testAcceptScheduled},
	{"AcceptPush/IdempotentReplay", testAcceptReplay},
	{"AcceptPush/ErrIdempotencyReuse", testAcceptReuse},
	{"AcceptPush/IdempotencyWindow", testAcceptWindow},
	{"AcceptPush/IdempotencyPerApp", testAcceptKeyPerApp},
	{"IdempotentPush", testIdempotentPush},
	{"Push/ErrNotFound", testPushNotFound},
	{"Recipients/UnknownPush", testRecipientsUnknown},
}

// newPush returns an immediate push to users, made now and charged 0.5
// each.
func (b *bundle) newPush(users ...string) (herald.Push, []herald.Recipient) {
	p := herald.Push{ID: herald.NewID("push_", b.now), AppID: b.app.ID, Kind: herald.KindUsers, Status: herald.StatusSending,
		Content: herald.Content{Title: "title", Content: "content"}, RequestedUsers: len(users), CreatedAt: b.now}
	b.charge(&p, len(users))
	rs := make([]herald.Recipient, len(users))
	for i, u := range users {
		rs[i] = herald.Recipient{UserID: u}
	}
	return p, rs
}

// charge sets what accepting p charges for users of its users, as the
// domain decides it (herald.App.PushCharge) for its app as stored now:
// the store writes the charge it is given.
func (b *bundle) charge(p *herald.Push, users int) {
	b.t.Helper()
	app, err := b.s.App(b.ctx, p.AppID)
	if err != nil {
		b.t.Fatalf("App %s: %v", p.AppID, err)
	}
	c := app.PushCharge(*p, users, p.CreatedAt)
	p.ServerActionsHalf, p.Ledger = c.Half, c.Ledger
}

// accept stores p with its fan-out job.
func (b *bundle) accept(p herald.Push, rs []herald.Recipient) herald.Push {
	b.t.Helper()
	id, replayed, err := b.s.AcceptPush(b.ctx, p, rs, nil, fanoutJob(p.ID))
	if err != nil || replayed || id != p.ID {
		b.t.Fatalf("AcceptPush: got (%s, %v, %v), want (%s, false, nil)", id, replayed, err, p.ID)
	}
	return p
}

// acceptUsers stores an immediate push to users.
func (b *bundle) acceptUsers(users ...string) herald.Push {
	b.t.Helper()
	return b.accept(b.newPush(users...))
}

// acceptScheduled stores a push to users scheduled at at.
func (b *bundle) acceptScheduled(at time.Time, users ...string) herald.Push {
	b.t.Helper()
	p, rs := b.newPush(users...)
	p.Status, p.ScheduledAt = herald.StatusScheduled, &at
	return b.accept(p, rs)
}

// pushOf reads a push with its counts.
func (b *bundle) pushOf(id string) herald.Push {
	b.t.Helper()
	p, err := b.s.Push(b.ctx, id)
	if err != nil {
		b.t.Fatalf("Push %s: %v", id, err)
	}
	return p
}

// pushCount returns how many pushes the bundle's app has.
func (b *bundle) pushCount() int {
	b.t.Helper()
	ps, _, err := b.s.Pushes(b.ctx, b.app.ID, herald.PushFilter{Limit: 1000})
	if err != nil {
		b.t.Fatalf("Pushes: %v", err)
	}
	return len(ps)
}

// usageOn returns the app's charge, in half units, on the local day.
func (b *bundle) usageOn(appID, day string) int64 {
	b.t.Helper()
	us, err := b.s.Usage(b.ctx, appID, day, day)
	if err != nil {
		b.t.Fatalf("Usage: %v", err)
	}
	var half int64
	for _, u := range us {
		half += u.Half
	}
	return half
}

// today is epoch's day in the default time zone.
const today = "2025-06-11"

func testAcceptStores(t *testing.T, b *bundle) {
	p, _ := b.newPush()
	p.Kind, p.RequestGroupID, p.Marketing, p.IsMarketingOpt, p.Badge = herald.KindMessages, "group-1", true, true, true
	p.Content = herald.Content{Title: "(광고) t", Content: "c", LinkURL: "https://l.example", ImageURL: "https://i.example/a.png"}
	rs := []herald.Recipient{
		{UserID: "u2", Content: &herald.Content{Title: "for u2", Content: "c2", LinkURL: "https://l2.example"}},
		{UserID: "u1", Content: &herald.Content{Title: "for u1", Content: "c1", ImageURL: "https://i.example/1.png"}},
		{UserID: "u3"},
	}
	p.RequestedUsers = 3
	b.charge(&p, 3)
	p.AdFooter = "\n(주)헤럴드 080-123-4567\n수신거부: 설정"
	b.accept(p, rs)

	got := b.pushOf(p.ID)
	if got.ID != p.ID || got.AppID != p.AppID || got.Kind != p.Kind || got.RequestGroupID != p.RequestGroupID ||
		got.Status != herald.StatusSending || !got.Marketing || !got.IsMarketingOpt || !got.Badge || got.Content != p.Content ||
		got.RequestedUsers != 3 || got.ServerActionsHalf != 3 || !got.CreatedAt.Equal(p.CreatedAt) ||
		got.ScheduledAt != nil || got.StartedAt != nil || got.FinishedAt != nil || got.Counts.RequestedUsers != 3 ||
		got.AdFooter != p.AdFooter {
		t.Errorf("got %+v, want %+v", got, p)
	}
	if rec, err := b.s.PushRecord(b.ctx, p.ID); err != nil || rec.ID != p.ID || rec.Content != p.Content {
		t.Errorf("PushRecord: got (%+v, %v), want the push", rec, err)
	}
	gotRs, err := b.s.Recipients(b.ctx, p.ID)
	must(t, "Recipients", err)
	if len(gotRs) != 3 {
		t.Fatalf("Recipients: got %d, want 3", len(gotRs))
	}
	for i, r := range rs {
		g := gotRs[i]
		if g.UserID != r.UserID || (g.Content == nil) != (r.Content == nil) || r.Content != nil && *g.Content != *r.Content {
			t.Errorf("recipient %d: got %+v, want %+v (request order, own content)", i, g, r)
		}
	}
	b.wantJobs(fanoutJob(p.ID).Kind(), 1)
	if half := b.usageOn(b.app.ID, today); half != 3 {
		t.Errorf("usage: got %d half units, want 3", half)
	}
}

func testAcceptScheduled(t *testing.T, b *bundle) {
	at := b.now.Add(time.Hour).Truncate(time.Minute)
	p := b.acceptScheduled(at, "u1")
	got := b.pushOf(p.ID)
	if got.Status != herald.StatusScheduled || got.ScheduledAt == nil || !got.ScheduledAt.Equal(at) {
		t.Errorf("got status %s at %v, want scheduled at %v", got.Status, got.ScheduledAt, at)
	}
	b.wantJobs(fanoutJob(p.ID).Kind(), 1)
	if half := b.usageOn(b.app.ID, today); half != 1 {
		t.Errorf("usage: got %d, want 1 (charged at accept)", half)
	}
}

var idem = herald.Idempotency{Key: "key-1", Hash: []byte("hash-1")}

// acceptIdem accepts a new push to u1 now with idem; it returns the push
// and what AcceptPush answered.
func (b *bundle) acceptIdem(key herald.Idempotency) (herald.Push, string, bool, error) {
	p, rs := b.newPush("u1")
	id, replayed, err := b.s.AcceptPush(b.ctx, p, rs, &key, fanoutJob(p.ID))
	return p, id, replayed, err
}

func testAcceptReplay(t *testing.T, b *bundle) {
	first, id, replayed, err := b.acceptIdem(idem)
	if err != nil || replayed || id != first.ID {
		t.Fatalf("first: got (%s, %v, %v), want (%s, false, nil)", id, replayed, err, first.ID)
	}
	b.tick(time.Hour)
	second, id, replayed, err := b.acceptIdem(idem)
	if err != nil || !replayed || id != first.ID {
		t.Errorf("repeat: got (%s, %v, %v), want (%s, true, nil)", id, replayed, err, first.ID)
	}
	if _, err := b.s.PushRecord(b.ctx, second.ID); err == nil {
		t.Errorf("the repeat's push was stored")
	}
	b.wantJobs(fanoutJob(second.ID).Kind(), 0)
	if n := b.pushCount(); n != 1 {
		t.Errorf("pushes: got %d, want 1", n)
	}
	if half := b.usageOn(b.app.ID, today); half != 1 {
		t.Errorf("usage: got %d, want 1 (charged once)", half)
	}
}

func testAcceptReuse(t *testing.T, b *bundle) {
	first, _, _, err := b.acceptIdem(idem)
	must(t, "first", err)
	other := herald.Idempotency{Key: idem.Key, Hash: []byte("another body")}
	second, _, _, err := b.acceptIdem(other)
	wantErr(t, "other body", err, herald.ErrIdempotencyReuse)
	if _, err := b.s.PushRecord(b.ctx, second.ID); err == nil {
		t.Errorf("the refused push was stored")
	}
	b.wantJobs(fanoutJob(second.ID).Kind(), 0)
	// The key still stands for the first push.
	if _, id, replayed, err := b.acceptIdem(idem); err != nil || !replayed || id != first.ID {
		t.Errorf("first body again: got (%s, %v, %v), want (%s, true, nil)", id, replayed, err, first.ID)
	}
}

func testAcceptWindow(t *testing.T, b *bundle) {
	first, _, _, err := b.acceptIdem(idem)
	must(t, "first", err)
	start := b.now
	b.setNow(start.Add(herald.IdempotencyWindow - time.Millisecond))
	if _, id, replayed, err := b.acceptIdem(idem); err != nil || !replayed || id != first.ID {
		t.Errorf("just within 24 h: got (%s, %v, %v), want (%s, true, nil)", id, replayed, err, first.ID)
	}
	b.setNow(start.Add(herald.IdempotencyWindow))
	later, id, replayed, err := b.acceptIdem(herald.Idempotency{Key: idem.Key, Hash: []byte("another body")})
	if err != nil || replayed || id != later.ID {
		t.Errorf("after 24 h, another body: got (%s, %v, %v), want (%s, false, nil)", id, replayed, err, later.ID)
	}
	b.wantJobs(fanoutJob(later.ID).Kind(), 1)
	b.tick(time.Second)
	if _, id, replayed, _ := b.acceptIdem(herald.Idempotency{Key: idem.Key, Hash: []byte("another body")}); !replayed || id != later.ID {
		t.Errorf("the key now stands for the later push: got (%s, %v), want (%s, true)", id, replayed, later.ID)
	}
}

func testAcceptKeyPerApp(t *testing.T, b *bundle) {
	_, _, _, err := b.acceptIdem(idem)
	must(t, "first", err)
	other := b.newApp("other")
	p, rs := b.newPush("u1")
	p.AppID = other.ID
	b.charge(&p, len(rs))
	id, replayed, err := b.s.AcceptPush(b.ctx, p, rs, &idem, fanoutJob(p.ID))
	if err != nil || replayed || id != p.ID {
		t.Errorf("same key, other app: got (%s, %v, %v), want (%s, false, nil)", id, replayed, err, p.ID)
	}
}

func testIdempotentPush(t *testing.T, b *bundle) {
	if _, found, err := b.s.IdempotentPush(b.ctx, b.app.ID, idem, b.now); found || err != nil {
		t.Errorf("unused key: got (%v, %v), want (false, nil)", found, err)
	}
	first, _, _, err := b.acceptIdem(idem)
	must(t, "accept", err)
	start := b.now
	p, found, err := b.s.IdempotentPush(b.ctx, b.app.ID, idem, start.Add(herald.IdempotencyWindow-time.Millisecond))
	if err != nil || !found || p.ID != first.ID || p.Status != herald.StatusSending || p.Counts.RequestedUsers != 1 {
		t.Errorf("within 24 h: got (%+v, %v, %v), want the first push", p, found, err)
	}
	_, found, err = b.s.IdempotentPush(b.ctx, b.app.ID, herald.Idempotency{Key: idem.Key, Hash: []byte("x")}, start)
	if found {
		t.Errorf("other body: got found, want not")
	}
	wantErr(t, "other body", err, herald.ErrIdempotencyReuse)
	for name, h := range map[string]herald.Idempotency{"same body": idem, "other body": {Key: idem.Key, Hash: []byte("x")}} {
		if _, found, err := b.s.IdempotentPush(b.ctx, b.app.ID, h, start.Add(herald.IdempotencyWindow)); found || err != nil {
			t.Errorf("after 24 h, %s: got (%v, %v), want (false, nil)", name, found, err)
		}
	}
	other := b.newApp("other")
	if _, found, err := b.s.IdempotentPush(b.ctx, other.ID, idem, start); found || err != nil {
		t.Errorf("other app: got (%v, %v), want (false, nil)", found, err)
	}
}

func testPushNotFound(t *testing.T, b *bundle) {
	_, err := b.s.Push(b.ctx, "push_missing")
	wantErr(t, "Push", err, herald.ErrNotFound)
	_, err = b.s.PushRecord(b.ctx, "push_missing")
	wantErr(t, "PushRecord", err, herald.ErrNotFound)
}

func testRecipientsUnknown(t *testing.T, b *bundle) {
	if rs, err := b.s.Recipients(b.ctx, "push_missing"); err != nil || len(rs) != 0 {
		t.Errorf("got (%v, %v), want none", rs, err)
	}
	if ds, err := b.s.Deliveries(b.ctx, "push_missing"); err != nil || len(ds) != 0 {
		t.Errorf("Deliveries: got (%v, %v), want none", ds, err)
	}
	if w, err := b.s.ResumeChunk(b.ctx, "push_missing", 0); err != nil || len(w.Slots) != 0 || w.Range != (sendstore.Range{}) {
		t.Errorf("ResumeChunk: got (%+v, %v), want nothing", w, err)
	}
}
