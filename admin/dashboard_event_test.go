package admin_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/sendstore"
)

// TestDashboardEventCounts: what devices reported about a push (received,
// opened, and the open rate: opened / sent) shows on the push's page, its
// request group's page and the history.
func TestDashboardEventCounts(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	a := newDashApp(t, e, b)
	ctx := context.Background()
	var ds []herald.Delivery
	for i, id := range []string{"1", "2"} {
		user := "u" + id
		d, err := e.db.RegisterDevice(ctx, a.app.ID, herald.DeviceRegistration{DeviceID: "d" + id, Token: "token-" + id,
			Platform: herald.PlatformAndroid, AppSourceVersion: "1.6.0", UserID: &user})
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, herald.Delivery{Seq: i, RecipientIdx: i, UserID: user, DeviceID: d.ID, Token: d.Token,
			Platform: d.Platform, AppSourceVersion: d.AppSourceVersion, TokenUpdatedAt: d.TokenUpdatedAt, State: herald.DeliveryPending})
	}
	res, err := a.c.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1", "u2"}, Title: "Spring", Content: "c",
		Options: &client.Options{RequestGroupID: "spring-sale"}})
	if err != nil {
		t.Fatal(err)
	}
	// The push's fan-out and both sends, recorded as delivery records them.
	if ok, err := e.db.StartSending(ctx, res.PushID, sendstore.Fanout{Deliveries: ds}); err != nil || !ok {
		t.Fatalf("StartSending: got (%v, %v)", ok, err)
	}
	var targets []sendstore.SlotTarget
	for i, d := range ds {
		targets = append(targets, sendstore.SlotTarget{Pos: i, DeviceID: d.DeviceID, Token: d.Token, Owner: &ds[i].UserID})
	}
	steps := []sendstore.ChunkStep{{New: sendstore.Range{Marked: 2}, Targets: targets},
		{Old: sendstore.Range{Marked: 2}, New: sendstore.Range{Settled: 2, Marked: 2}}}
	for _, st := range steps {
		if _, _, err := e.db.AdvanceChunk(ctx, a.app.ID, res.PushID, st); err != nil {
			t.Fatal(err)
		}
	}
	for device, types := range map[string][]herald.EventType{"d1": {herald.EventReceived, herald.EventOpened}, "d2": {herald.EventReceived}} {
		var marks []herald.EventMark
		for _, typ := range types {
			marks = append(marks, herald.EventMark{PushID: res.PushID, Type: typ, At: e.clock.Now()})
		}
		if _, err := e.db.RecordEvents(ctx, a.app.ID, device, marks); err != nil {
			t.Fatal(err)
		}
	}
	resp, body := b.get(a.path + "/pushes/" + res.PushID)
	wantStatus(t, resp, body, http.StatusOK)
	wantIn(t, "push page", body, `id="count-sent">2<`, `id="count-received">2<`, `id="count-opened">1<`, `id="count-open-rate">50.0%<`)
	resp, body = b.get(a.path + "/groups/spring-sale")
	wantStatus(t, resp, body, http.StatusOK)
	wantIn(t, "group page", body, `id="group-received">2<`, `id="group-opened">1<`, `id="group-open-rate">50.0%<`)
	_, body = b.get(a.path + "/pushes")
	wantIn(t, "history", body, `data-label="Received">2<`, `data-label="Opened">1 <small>(50.0%)</small><`)
}
