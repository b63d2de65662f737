package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
)

// report has device report events of the push over HTTP and fails unless
// accepted of them were.
func report(t *testing.T, a testenv.App, name, device string, accepted int, events ...client.Event) {
	t.Helper()
	got, err := a.Client.ReportEvents(context.Background(), device, events)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if want := (client.EventsResult{Accepted: accepted, Ignored: len(events) - accepted}); got != want {
		t.Errorf("%s: got %+v, want %+v", name, got, want)
	}
}

// both is a report of received and opened for the push.
func both(pushID string) []client.Event {
	return []client.Event{{PushID: pushID, Type: "received"}, {PushID: pushID, Type: "opened"}}
}

// wantReceivedAtMostSent fails unless the push (or group) counts received
// at most sent, and received and opened as wanted.
func wantEventCounts(t *testing.T, what string, c eventCounts, sent, received, opened int) {
	t.Helper()
	if c.Counts.Sent != sent || c.Counts.Received != received || c.Counts.Opened != opened || c.Counts.Received > c.Counts.Sent {
		t.Errorf("%s: got %+v, want sent %d, received %d, opened %d (received ≤ sent)", what, c.Counts, sent, received, opened)
	}
}

// TestEventsOnlyForSentDevices: events count only for a device sent the
// push (DESIGN 7). A night-deferred device waiting for 08:00, the same
// device once its deferred part is cancelled, and a device whose send
// failed (its token deleted) report over HTTP: each report is ignored,
// and received stays at most sent on each push, their group and the
// overview. The service runs on an injected clock at 07:50 in Seoul.
func TestEventsOnlyForSentDevices(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	morning := time.Date(2026, 12, 5, 8, 0, 0, 0, testenv.Seoul)
	clk.Run(morning.Add(-10 * time.Minute))
	e := start(t, testenv.Clocked(clk))
	a := testenv.ConsentApp(t, e.Harness, "Asia/Seoul")
	e.Device(a, "dev-gone", "unregistered-gone", "android", "1.6.0", "gone")
	ctx := context.Background()
	yes := true
	night, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"none", "day", "all"}, Title: "Night sale", Content: "50% off",
		Options: &client.Options{IsMarketing: &yes, NightPolicy: "defer", RequestGroupID: "night-sale"}})
	if err != nil {
		t.Fatal(err)
	}
	testenv.WantDeferredPush(t, e.Harness, a, night.PushID, morning, 1)
	failed, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"all", "gone"}, Title: "Notice", Content: "hello",
		Options: &client.Options{RequestGroupID: "night-sale"}})
	if err != nil {
		t.Fatal(err)
	}
	e.WaitFinal(failed.PushID, 20*time.Second)

	report(t, a, "Deferred", "dev-day-1", 0, both(night.PushID)...)
	report(t, a, "Suppressed", "dev-none-0", 0, both(night.PushID)...)
	report(t, a, "SentAtOnce", "dev-all-2", 2, both(night.PushID)...)
	report(t, a, "FailedSend", "dev-gone", 0, both(failed.PushID)...)
	report(t, a, "SentBesideTheFailure", "dev-all-2", 1, client.Event{PushID: failed.PushID, Type: "received"})
	if code := e.AdminJSON("POST", "/admin/v1/pushes/"+night.PushID+"/cancel", nil, nil); code != http.StatusOK {
		t.Fatalf("cancel: got %d, want 200", code)
	}
	e.WaitFinal(night.PushID, 20*time.Second)
	report(t, a, "DeferralCancelled", "dev-day-1", 0, both(night.PushID)...)

	var p1, p2, group eventCounts
	e.AdminJSON("GET", "/admin/v1/pushes/"+night.PushID, nil, &p1)
	e.AdminJSON("GET", "/admin/v1/pushes/"+failed.PushID, nil, &p2)
	e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/push-groups/night-sale", nil, &group)
	wantEventCounts(t, "night push", p1, 1, 1, 1)
	wantEventCounts(t, "push with a failed send", p2, 1, 1, 0)
	wantEventCounts(t, "group", group, 2, 2, 1)
	var overview struct{ Sent, Received, Opened int }
	if code := e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/overview?days=1", nil, &overview); code != http.StatusOK {
		t.Fatalf("overview: got %d", code)
	}
	if overview.Received > overview.Sent || overview.Received != 2 {
		t.Errorf("overview: got %+v, want received 2 ≤ sent", overview)
	}
}

// TestEventsInFlightCountOnceSent: a device reports its push while the
// emulator holds the send (the app had the message before Herald recorded
// FCM's answer): the report is accepted and not yet counted; once the send
// is answered and recorded, it counts, once.
func TestEventsInFlightCountOnceSent(t *testing.T) {
	t.Parallel()
	held, release := make(chan struct{}, 1), make(chan struct{})
	e := start(t, testenv.Options{Emulator: emulator.Options{BeforeAnswer: func(token string) {
		if strings.HasPrefix(token, "held-") {
			held <- struct{}{}
			<-release
		}
	}}})
	a := e.NewApp(nil)
	e.Register(a, "held-", "u1")
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "t", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Fatal("the send never reached the emulator")
	}
	report(t, a, "InFlight", "dev-u1-0", 2, both(res.PushID)...)
	report(t, a, "InFlightAgain", "dev-u1-0", 0, both(res.PushID)...)
	var c eventCounts
	e.AdminJSON("GET", "/admin/v1/pushes/"+res.PushID, nil, &c)
	if c.Counts.Received != 0 || c.Counts.Opened != 0 {
		t.Errorf("while in flight: got %+v, want nothing counted yet", c.Counts)
	}
	close(release)
	e.WaitFinal(res.PushID, 20*time.Second)
	e.AdminJSON("GET", "/admin/v1/pushes/"+res.PushID, nil, &c)
	wantEventCounts(t, "after the send", c, 1, 1, 1)
	report(t, a, "AfterTheSend", "dev-u1-0", 0, both(res.PushID)...)
}
