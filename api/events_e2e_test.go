package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
)

// eventCounts is the part of a push's (or group's) admin JSON that devices'
// reports make.
type eventCounts struct {
	Counts struct{ Sent, Received, Opened int }
}

// TestEventsEndToEnd: a real push through the FCM emulator (labelled with
// its requestGroupId), its devices reporting over HTTP what they did with
// it, and the counts on the push and its group in the admin API: each
// (push, device, type) once, an opened counting as received, and what
// cannot count ignored: repeats, another app's device, an unknown device,
// a device the push was not sent to, a stale event.
func TestEventsEndToEnd(t *testing.T) {
	t.Parallel()
	e := start(t)
	ctx := context.Background()
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1", "u2", "u3") // devices dev-u1-0, dev-u2-1, dev-u3-2
	e.Device(a, "dev-late", "tok-late", "android", "1.6.0", "u4")
	other := e.NewApp(nil)
	e.Device(other, "dev-u1-0", "tok-other", "android", "1.6.0", "u1") // the same device id in another app

	first, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1", "u2", "u3"}, Title: "Spring", Content: "sale",
		Options: &client.Options{RequestGroupID: "spring-sale"}})
	if err != nil {
		t.Fatal(err)
	}
	second, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "Spring", Content: "last day",
		Options: &client.Options{RequestGroupID: "spring-sale"}})
	if err != nil {
		t.Fatal(err)
	}
	e.WaitFinal(first.PushID, 10*time.Second)
	e.WaitFinal(second.PushID, 10*time.Second)

	// What the device got: the push id to report, and Firebase's label.
	msgs := e.Received("tok-u1")
	if len(msgs) != 2 {
		t.Fatalf("tok-u1: got %d messages, want 2", len(msgs))
	}
	got := map[string]string{}
	for _, msg := range msgs {
		var m struct {
			Data       struct{ PushID string }
			FCMOptions struct {
				AnalyticsLabel string `json:"analytics_label"`
			} `json:"fcm_options"`
		}
		if err := json.Unmarshal(msg.Message, &m); err != nil {
			t.Fatal(err)
		}
		got[m.Data.PushID] = m.FCMOptions.AnalyticsLabel
	}
	if got[first.PushID] != "spring-sale" || got[second.PushID] != "spring-sale" {
		t.Errorf("messages: got labels by pushId %v, want %s and %s labelled spring-sale", got, first.PushID, second.PushID)
	}

	stale := time.Now().Add(-31 * 24 * time.Hour).UTC().Format(time.RFC3339)
	for _, r := range []struct {
		name     string
		c        *client.Client
		device   string
		events   []client.Event
		accepted int
	}{
		{"ReceivedAndOpened", a.Client, "dev-u1-0", []client.Event{{PushID: first.PushID, Type: "received"}, {PushID: first.PushID, Type: "opened"}}, 2},
		{"OpenedAlone", a.Client, "dev-u2-1", []client.Event{{PushID: first.PushID, Type: "opened"}}, 1},
		{"ReceivedAfterOpened", a.Client, "dev-u2-1", []client.Event{{PushID: first.PushID, Type: "received"}}, 0},
		{"Repeat", a.Client, "dev-u1-0", []client.Event{{PushID: first.PushID, Type: "opened"}, {PushID: first.PushID, Type: "opened"}}, 0},
		{"Stale", a.Client, "dev-u3-2", []client.Event{{PushID: first.PushID, Type: "received", At: stale}}, 0},
		{"AnotherAppsDevice", other.Client, "dev-u1-0", []client.Event{{PushID: first.PushID, Type: "opened"}}, 0},
		{"UnknownDevice", a.Client, "dev-nobody", []client.Event{{PushID: first.PushID, Type: "received"}}, 0},
		{"NotSentToDevice", a.Client, "dev-late", []client.Event{{PushID: first.PushID, Type: "received"}}, 0},
		{"UnknownPush", a.Client, "dev-u1-0", []client.Event{{PushID: "push_0000000000000000000000", Type: "received"}}, 0},
		{"SecondPushReceived", a.Client, "dev-u1-0", []client.Event{{PushID: second.PushID, Type: "received", At: time.Now().UTC().Format(time.RFC3339)}}, 1},
	} {
		got, err := r.c.ReportEvents(ctx, r.device, r.events)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		if want := (client.EventsResult{Accepted: r.accepted, Ignored: len(r.events) - r.accepted}); got != want {
			t.Errorf("%s: got %+v, want %+v", r.name, got, want)
		}
	}

	var p1, p2, group eventCounts
	e.AdminJSON("GET", "/admin/v1/pushes/"+first.PushID, nil, &p1)
	e.AdminJSON("GET", "/admin/v1/pushes/"+second.PushID, nil, &p2)
	if code := e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/push-groups/spring-sale", nil, &group); code != http.StatusOK {
		t.Fatalf("push group: got %d, want 200", code)
	}
	if p1.Counts.Sent != 3 || p1.Counts.Received != 2 || p1.Counts.Opened != 2 {
		t.Errorf("first push: got %+v, want sent 3, received 2, opened 2", p1.Counts)
	}
	if p2.Counts.Received != 1 || p2.Counts.Opened != 0 {
		t.Errorf("second push: got %+v, want received 1, opened 0", p2.Counts)
	}
	if group.Counts.Sent != 4 || group.Counts.Received != 3 || group.Counts.Opened != 2 {
		t.Errorf("group: got %+v, want sent 4, received 3, opened 2", group.Counts)
	}

	resp, err := http.Get(e.Admin.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`herald_sdk_events_total{outcome="accepted",type="opened"} 2`,
		`herald_sdk_events_total{outcome="accepted",type="received"} 2`,
		`herald_sdk_events_total{outcome="ignored",type="opened"} 3`,
		`herald_sdk_events_total{outcome="ignored",type="received"} 5`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics: missing %q", want)
		}
	}
}
