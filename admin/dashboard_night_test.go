package admin_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/sendstore"
)

// TestDashboardDeferredPush: a push whose part waits for the morning shows
// it (how many, until when) and offers its cancel until 5 minutes before;
// the cancel, confirmed, suppresses and refunds it.
func TestDashboardDeferredPush(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	a := newDashApp(t, e, b)
	ctx := context.Background()
	app := a.app // an ad needs the footer's settings (art. 50(4))
	app.AdSenderName, app.AdSenderContact, app.AdOptOut = "Herald", "080", "Opt out: Settings"
	if err := e.db.UpdateApp(ctx, app); err != nil {
		t.Fatal(err)
	}
	morning := time.Date(2026, 12, 2, 8, 0, 0, 0, seoul)
	deferred := func() string {
		t.Helper()
		yes := true
		res, err := a.c.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "(광고) Night sale", Content: "c",
			Options: &client.Options{IsMarketing: &yes, NightPolicy: "defer"}})
		if err != nil {
			t.Fatal(err)
		}
		// The fan-out (no workers run here) as delivery records it at night.
		d := herald.Delivery{Seq: 0, UserID: "u1", DeviceID: "d1", Token: "t1", Platform: herald.PlatformAndroid, State: herald.DeliveryPending}
		f := sendstore.Fanout{Deliveries: []herald.Delivery{d}, Deferred: []herald.DeferredChunk{{Chunk: 0, Until: morning, RefundHalf: 1}}}
		f.To.Seq, f.To.Chunk = 1, 1
		if started, err := e.db.StartSending(ctx, res.PushID, f); err != nil || !started {
			t.Fatalf("StartSending: %v %v", started, err)
		}
		return res.PushID
	}
	e.clock.Set(time.Date(2026, 12, 1, 23, 0, 0, 0, seoul))
	id := deferred()
	_, body := b.get(a.path + "/pushes/" + id)
	wantIn(t, "push page", body, `id="push-deferred">1 tokens without night consent are sent at 2026-12-02 08:00`,
		`id="count-deferred">1<`, `id="cancel-deferred"`)
	_, body = b.get(a.path + "/scheduled/" + id + "/cancel")
	wantIn(t, "confirmation", body, "Cancel the deferred part of this push?", `id="confirm-cancel"`)
	if to := b.submit(a.path+"/scheduled/"+id+"/cancel", a.path+"/scheduled/"+id+"/cancel", url.Values{"confirmed": {"yes"}}); to != a.path+"/pushes/"+id {
		t.Errorf("after the cancel: sent to %s, want the push", to)
	}
	p, _ := e.db.Push(ctx, id)
	if p.Counts.SuppressedNight != 1 || p.Counts.DeferredNight != 0 || p.ServerActionsHalf != 0 {
		t.Errorf("after the cancel: got %+v, %d half units; want 1 suppressed by the night, none deferred, refunded", p.Counts, p.ServerActionsHalf)
	}
	_, body = b.get(a.path + "/pushes/" + id)
	if wantIn(t, "push page after the cancel", body, `id="count-deferred">0<`); containsAny(body, `id="cancel-deferred"`, `id="push-deferred"`) {
		t.Errorf("push page after the cancel: still offers or shows the deferred part")
	}

	late := deferred()
	e.clock.Set(morning.Add(-4 * time.Minute))
	b.login() // the session of the day before has ended
	_, body = b.get(a.path + "/scheduled/" + late + "/cancel")
	wantIn(t, "confirmation at 07:56", body, "The deferred part can no longer be cancelled")
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
