package api_test

import (
	"context"
	"net/http"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/sendstore"
)

// clientAnswer is one answer of the admin API, with the schema of
// api/openapi.yaml it answers to.
type clientAnswer struct {
	name, schema string
	body         []byte
}

// clientAnswers draws from the live handlers every kind of answer that
// carries a push (detail, list, scheduled list, group, edit and cancel
// answers) for pushes whose members take each of their forms: a
// scheduled ad (adFooter text, scheduledAt, an edit), one sent at once
// (adFooter, deferredUntil and marketingRule null), a /messages push (its
// messages), a night-deferred one (deferredUntil set, then its cancel's
// trail entry), local-time ones (scheduled; sending with nextLocalAt and
// lateLocal) and a cancelled one; and the apps' answers, one app with
// its ad settings null, one with them set.
func (e *liveEnv) clientAnswers() []clientAnswer {
	e.t.Helper()
	e.apps()
	e.devices()
	biz := e.liveApps[1]
	if !e.adSettings {
		e.t.Fatal("the app answers no ad settings: an ad push cannot be made")
	}
	var out []clientAnswer
	add := func(name, schema string, body []byte) { out = append(out, clientAnswer{name, schema, body}) }
	get := func(path string) []byte { return e.admin(http.MethodGet, path, nil, http.StatusOK).Body }
	send := func(path string, body map[string]any) string {
		return e.server(biz, http.MethodPost, path, body, http.StatusOK).Header.Get("X-Push-Id")
	}
	seoul := testenv.Seoul
	at := time.Now().In(seoul).Add(48 * time.Hour).Format("2006-01-02T15:04")
	ad := send("/api/push/v2/users", map[string]any{"userIds": []any{"user-1"}, "title": "(광고) Weekend sale", "content": "20% off",
		"linkURL": "https://example.com/sale", "options": map[string]any{"scheduleTime": at, "requestGroupId": "sale-01"}})
	add("scheduled ad, edited", "Push", e.admin(http.MethodPatch, "/admin/v1/pushes/"+ad, map[string]any{"content": "30% off"}, http.StatusOK).Body)
	add("scheduled ad", "PushDetail", get("/admin/v1/pushes/"+ad))
	now := send("/api/push/v2/users", map[string]any{"userIds": []any{"user-1", 42}, "title": "Shipped", "content": "Tomorrow",
		"options": map[string]any{"requestGroupId": "sale-01", "isUsingBadge": true}})
	add("sent at once", "PushDetail", get("/admin/v1/pushes/"+now))
	msgs := send("/api/push/v2/messages", map[string]any{"messages": []any{
		map[string]any{"userId": "user-1", "title": "Hello Ann", "content": "Ready.", "imageURL": "https://example.com/t.png"},
		map[string]any{"userId": 42, "title": "(광고) Hello Bo", "content": "Soon."}}})
	add("messages", "PushDetail", get("/admin/v1/pushes/"+msgs))
	deferred := e.deferredPush(seoul)
	add("deferred", "PushDetail", get("/admin/v1/pushes/"+deferred))
	add("deferred part cancelled", "Push", e.admin(http.MethodPost, "/admin/v1/pushes/"+deferred+"/cancel", nil, http.StatusOK).Body)
	add("deferred part cancelled", "PushDetail", get("/admin/v1/pushes/"+deferred))
	local := send("/api/push/v2/users", map[string]any{"userIds": []any{"user-1"}, "title": "Good morning", "content": "c",
		"options": map[string]any{"scheduleTime": at, "localTime": true}})
	add("local time, scheduled", "PushDetail", get("/admin/v1/pushes/"+local))
	add("local time, sending", "PushDetail", get("/admin/v1/pushes/"+e.localPush()))
	gone := send("/api/push/v2/users", map[string]any{"userIds": []any{"user-1"}, "title": "Gone", "content": "c",
		"options": map[string]any{"scheduleTime": at, "requestGroupId": "sale-01"}})
	add("cancelled", "Push", e.admin(http.MethodPost, "/admin/v1/pushes/"+gone+"/cancel", nil, http.StatusOK).Body)
	app := "/admin/v1/apps/" + biz.ID
	add("history", "PushList", get(app+"/pushes"))
	add("scheduled", "PushList", get(app+"/scheduled-pushes"))
	add("group", "PushGroup", get(app+"/push-groups/sale-01"))
	add("app without ad settings", "App", get("/admin/v1/apps/"+e.liveApps[0].ID))
	add("app with ad settings", "App", get(app))
	add("apps", "AppList", get("/admin/v1/apps"))
	return out
}

// deferredPush sends user-1 (whose device has marketing consent by day
// only) a marketing push with nightPolicy defer and records its fan-out
// as delivery does at night: its one device deferred to the morning. (No
// worker runs in these handlers, and it may be day.) The morning is at
// least an hour away, so that the part may still be cancelled.
func (e *liveEnv) deferredPush(loc *time.Location) string {
	e.t.Helper()
	ctx := context.Background()
	biz := e.liveApps[1]
	id := e.server(biz, http.MethodPost, "/api/push/v2/users", map[string]any{"userIds": []any{"user-1"}, "title": "(광고) Night sale",
		"content": "50% off", "options": map[string]any{"isMarketing": true, "nightPolicy": "defer"}}, http.StatusOK).Header.Get("X-Push-Id")
	d := herald.Delivery{Seq: 0, UserID: "user-1", DeviceID: "device-1", Token: "fcm-token-1", Platform: herald.PlatformAndroid, State: herald.DeliveryPending}
	morning := herald.NextMorning(time.Now().Add(time.Hour), loc)
	f := sendstore.Fanout{Deliveries: []herald.Delivery{d}, Deferred: []sendstore.DeferredChunk{{Chunk: 0, Until: morning, RefundHalf: 1}}}
	f.To.Seq, f.To.Chunk = 1, 1
	if started, err := e.db.StartSending(ctx, id, f); err != nil || !started {
		e.t.Fatalf("record the deferred fan-out: %v %v", started, err)
	}
	return id
}

// localPush sends user-1 and user 42 a local-time push and records its
// fan-out as delivery does once its first zone's time came: one device
// sent at once, late, and one in a zone part an hour away (no worker
// runs in these handlers).
func (e *liveEnv) localPush() string {
	e.t.Helper()
	biz := e.liveApps[1]
	at := time.Now().In(testenv.Seoul).Add(2 * time.Hour).Format("2006-01-02T15:04")
	id := e.server(biz, http.MethodPost, "/api/push/v2/users", map[string]any{"userIds": []any{"user-1", 42}, "title": "Good morning",
		"content": "c", "options": map[string]any{"scheduleTime": at, "localTime": true}}, http.StatusOK).Header.Get("X-Push-Id")
	now := herald.Delivery{Seq: 0, UserID: "user-1", DeviceID: "device-1", Token: "fcm-token-1", Platform: herald.PlatformAndroid, State: herald.DeliveryPending}
	later := herald.Delivery{Seq: 1, RecipientIdx: 1, UserID: "42", DeviceID: "device-2", Token: "fcm-token-2", Platform: herald.PlatformAndroid,
		State: herald.DeliveryPending, Chunk: 1}
	f := sendstore.Fanout{Deliveries: []herald.Delivery{now, later}, LateLocal: 1,
		Deferred: []sendstore.DeferredChunk{{Chunk: 1, Until: time.Now().Add(time.Hour), ZonePart: true}}}
	f.To.Seq, f.To.Chunk = 2, 2
	if started, err := e.db.StartSending(context.Background(), id, f); err != nil || !started {
		e.t.Fatalf("record the local-time fan-out: %v %v", started, err)
	}
	return id
}
