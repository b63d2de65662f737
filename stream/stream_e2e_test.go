package stream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/webhook"
)

// message is a push.events message as a receiver reads it.
type message struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      struct {
		Events []event `json:"events"`
	} `json:"data"`
}

// event is one event of a message.
type event struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      struct {
		AppID          string  `json:"appId"`
		PushID         string  `json:"pushId"`
		RequestGroupID *string `json:"requestGroupId"`
		UserID         *string `json:"userId"`
		DeviceID       string  `json:"deviceId"`
		TokenSuffix    string  `json:"tokenSuffix"`
		Reason         string  `json:"reason"`
	} `json:"data"`
}

// attempt is one request the receiver got, taken or refused.
type attempt struct {
	id    string // webhook-id
	taken bool
	msg   message
}

// receiver is a webhook endpoint on 127.0.0.1 that checks every
// request's signature, answers 500 while down, and keeps what it got.
type receiver struct {
	t      *testing.T
	url    string
	secret string
	down   atomic.Bool
	mu     sync.Mutex
	got    []attempt
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		if err := webhook.Verify(r.secret, req.Header, body, time.Now(), 0); err != nil {
			t.Errorf("signature of %s: %v", req.Header.Get(webhook.HeaderID), err)
		}
		var m message
		if err := json.Unmarshal(body, &m); err != nil {
			t.Errorf("body %s: %v", body, err)
		}
		if m.Type != "push.events" {
			return // another kind of message (push.undeliverable, consent.changed)
		}
		checkMembers(t, body)
		a := attempt{id: req.Header.Get(webhook.HeaderID), taken: !r.down.Load(), msg: m}
		r.got = append(r.got, a)
		if !a.taken {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/hooks"
	return r
}

// checkMembers checks that a message has exactly DESIGN's members.
func checkMembers(t *testing.T, body []byte) {
	var raw struct {
		Data struct {
			Events []struct {
				Data map[string]json.RawMessage `json:"data"`
			} `json:"events"`
		} `json:"data"`
		Rest map[string]json.RawMessage `json:"-"`
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || len(top) != 3 || top["type"] == nil || top["timestamp"] == nil || top["data"] == nil {
		t.Errorf("message members: got %s, want type, timestamp, data", body)
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	for _, e := range raw.Data.Events {
		keys := []string{}
		for k := range e.Data {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		want := []string{"appId", "deviceId", "pushId", "requestGroupId", "tokenSuffix", "userId"}
		if _, ok := e.Data["reason"]; ok {
			want = []string{"appId", "deviceId", "pushId", "reason", "requestGroupId", "tokenSuffix", "userId"}
		}
		if !slices.Equal(keys, want) {
			t.Errorf("event data members: got %v, want %v", keys, want)
		}
	}
}

// attempts returns what the receiver got so far.
func (r *receiver) attempts() []attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// taken returns the events of the messages the receiver took, in order.
func (r *receiver) taken() []event {
	var out []event
	for _, a := range r.attempts() {
		if a.taken {
			out = append(out, a.msg.Data.Events...)
		}
	}
	return out
}

// setup starts a node on a clock the test moves, with an app whose
// webhook takes every event type.
func setup(t *testing.T) (*testenv.Harness, *testenv.Clock, testenv.App, *receiver) {
	clk := &testenv.Clock{}
	clk.Run(time.Now())
	e := testenv.Start(t, testenv.Clocked(clk))
	a := e.NewApp(nil)
	recv := newReceiver(t)
	recv.mu.Lock()
	recv.secret = e.PutWebhook(a, recv.url)
	recv.mu.Unlock()
	all := []string{"push.undeliverable", "consent.changed", "push.sent", "push.failed", "push.received", "push.opened"}
	var got struct{ WebhookEvents []string }
	if code := e.AdminJSON("PATCH", "/admin/v1/apps/"+a.ID, map[string]any{"webhookEvents": all}, &got); code != http.StatusOK ||
		!slices.Equal(got.WebhookEvents, all) {
		t.Fatalf("patch webhookEvents: got %d %v, want 200 %v", code, got.WebhookEvents, all)
	}
	return e, clk, a, recv
}

// key names an event by what it tells of, not its id.
func key(e event) string { return e.Type + " " + e.Data.PushID + " " + e.Data.DeviceID }

// TestDeliveryEvents: a push through the FCM emulator to two users whose
// devices take it and one whose token is dead, then the devices' reports
// over the SDK API: the receiver gets every event once, in DESIGN's
// shape, signed, with unique ids, each device's in the order they
// happened; nothing goes out before its batch is due (a second on the
// node's clock).
func TestDeliveryEvents(t *testing.T) {
	t.Parallel()
	e, clk, a, recv := setup(t)
	ctx := context.Background()
	e.Register(a, "tok-abcdefghij-", "u1", "u2") // devices dev-u1-0, dev-u2-1
	e.Device(a, "dev-gone", "unregistered-gone", "android", "1.6.0", "gone")
	res, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1", "u2", "gone"}, Title: "t", Content: "c",
		Options: &client.Options{RequestGroupID: "group-1"}})
	if err != nil {
		t.Fatal(err)
	}
	e.WaitFinal(res.PushID, 10*time.Second)
	for dev, events := range map[string][]client.Event{
		"dev-u1-0": {{PushID: res.PushID, Type: "received"}, {PushID: res.PushID, Type: "opened"}},
		"dev-u2-1": {{PushID: res.PushID, Type: "opened"}},
	} {
		if _, err := a.Client.ReportEvents(ctx, dev, events); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(recv.attempts()); n != 0 {
		t.Errorf("messages before the batch is a second old: got %d, want 0", n)
	}
	clk.Run(clk.Now().Add(2 * time.Second))
	want := []string{
		"push.sent " + res.PushID + " dev-u1-0", "push.sent " + res.PushID + " dev-u2-1", "push.failed " + res.PushID + " dev-gone",
		"push.received " + res.PushID + " dev-u1-0", "push.opened " + res.PushID + " dev-u1-0",
		"push.received " + res.PushID + " dev-u2-1", "push.opened " + res.PushID + " dev-u2-1",
	}
	testenv.WaitFor(t, "every event", 10*time.Second, func() bool {
		clk.Run(clk.Now().Add(time.Second))
		return len(recv.taken()) >= len(want)
	})
	got := recv.taken()
	keys := make([]string, len(got))
	ids := map[string]bool{}
	for i, ev := range got {
		keys[i] = key(ev)
		if ids[ev.ID] {
			t.Errorf("event id %s: given twice", ev.ID)
		}
		ids[ev.ID] = true
		d := ev.Data
		if d.AppID != a.ID || d.RequestGroupID == nil || *d.RequestGroupID != "group-1" || d.UserID == nil {
			t.Errorf("%s: got app %s group %v user %v, want %s group-1 and a user", key(ev), d.AppID, d.RequestGroupID, d.UserID, a.ID)
			continue
		}
		if ts, err := time.Parse(time.RFC3339, ev.Timestamp); err != nil || ts.Sub(clk.Now()).Abs() > time.Minute {
			t.Errorf("%s timestamp: got %q, want RFC 3339 near now", key(ev), ev.Timestamp)
		}
		wantUser := map[string]string{"dev-u1-0": "u1", "dev-u2-1": "u2", "dev-gone": "gone"}[d.DeviceID]
		wantSuffix := map[string]string{"dev-u1-0": "fghij-u1", "dev-u2-1": "fghij-u2", "dev-gone": "red-gone"}[d.DeviceID]
		wantReason := ""
		if ev.Type == "push.failed" {
			wantReason = "APP_DELETED"
		}
		if *d.UserID != wantUser || d.TokenSuffix != wantSuffix || d.Reason != wantReason {
			t.Errorf("%s: got user %s suffix %s reason %q, want %s %s %q", key(ev), *d.UserID, d.TokenSuffix, d.Reason,
				wantUser, wantSuffix, wantReason)
		}
	}
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	wantSorted := slices.Clone(want)
	slices.Sort(wantSorted)
	if !slices.Equal(sorted, wantSorted) {
		t.Fatalf("events: got %v, want each of %v once", keys, want)
	}
	for _, dev := range []string{"dev-u1-0", "dev-u2-1"} {
		var order []string
		for _, k := range keys {
			if k[len(k)-len(dev):] == dev {
				order = append(order, k[:len(k)-len(res.PushID)-len(dev)-2])
			}
		}
		if !slices.Equal(order, []string{"push.sent", "push.received", "push.opened"}) {
			t.Errorf("%s: got %v, want sent, received, opened", dev, order)
		}
	}
}

// TestDeliveryEventsReceiverDown: the receiver answers 500 from before a
// push of many devices until after it: the push finishes all the same
// (the queue grows, sending waits for nothing), each retry waits at most
// 30 s of the node's clock however many failed before, and once the
// receiver is back every event arrives, each once, under the id it had
// in the messages refused.
func TestDeliveryEventsReceiverDown(t *testing.T) {
	t.Parallel()
	e, clk, a, recv := setup(t)
	ctx := context.Background()
	users := make([]string, 60)
	ids := make([]any, len(users))
	for i := range users {
		users[i] = fmt.Sprintf("u%02d", i)
		ids[i] = users[i]
	}
	e.Register(a, "tok-", users...)
	recv.down.Store(true)
	res, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: ids, Title: "t", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	e.WaitFinal(res.PushID, 20*time.Second)
	// Eight refusals in a row, each retried within 30 s of the clock:
	// the ninth would wait 256 s without the cap.
	for n := 1; n <= 8; n++ {
		testenv.WaitFor(t, fmt.Sprintf("attempt %d", n), 10*time.Second, func() bool { return len(recv.attempts()) >= n })
		clk.Run(clk.Now().Add(30 * time.Second))
	}
	if got := recv.taken(); len(got) != 0 {
		t.Fatalf("taken while down: %d events", len(got))
	}
	recv.down.Store(false)
	testenv.WaitFor(t, "every event after the receiver is back", 10*time.Second, func() bool {
		clk.Run(clk.Now().Add(30 * time.Second))
		return len(recv.taken()) >= len(users)
	})
	idOf := map[string]string{}
	for _, ev := range recv.taken() {
		if _, twice := idOf[key(ev)]; twice || ev.Type != "push.sent" {
			t.Errorf("%s (%s): taken twice or not a send", key(ev), ev.ID)
		}
		idOf[key(ev)] = ev.ID
	}
	if len(idOf) != len(users) {
		t.Errorf("events taken: got %d, want %d", len(idOf), len(users))
	}
	msgIDs := map[string]bool{}
	for _, at := range recv.attempts() {
		for _, ev := range at.msg.Data.Events {
			if idOf[key(ev)] != ev.ID {
				t.Errorf("%s: id %s in a refused message, %s when taken", key(ev), ev.ID, idOf[key(ev)])
			}
		}
		if !at.taken {
			msgIDs[at.id] = true
		}
	}
	var taken []attempt
	for _, at := range recv.attempts() {
		if at.taken {
			taken = append(taken, at)
		}
	}
	if len(taken) == 0 || !msgIDs[taken[0].id] {
		t.Errorf("the first message taken: want the webhook-id of the refused ones %v", msgIDs)
	}
}

// TestDeliveryEventsOff: an app on the default list gets its
// push.undeliverable report but no delivery event, and queues none.
func TestDeliveryEventsOff(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	clk.Run(time.Now())
	e := testenv.Start(t, testenv.Clocked(clk))
	a := e.NewApp(nil)
	recv := testenv.NewReceiver(t, 0)
	e.PutWebhook(a, recv.URL)
	var got struct{ WebhookEvents []string }
	if e.AdminJSON("GET", "/admin/v1/apps/"+a.ID, nil, &got); !slices.Equal(got.WebhookEvents, []string{"push.undeliverable", "consent.changed"}) {
		t.Errorf("default webhookEvents: got %v", got.WebhookEvents)
	}
	e.Register(a, "tok-", "u1")
	e.Device(a, "dev-gone", "unregistered-gone", "android", "1.6.0", "gone")
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1", "gone"}, Title: "t", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	e.WaitFinal(res.PushID, 10*time.Second)
	if _, err := a.Client.ReportEvents(context.Background(), "dev-u1-0", []client.Event{{PushID: res.PushID, Type: "opened"}}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "the push.undeliverable report", 10*time.Second, func() bool { return len(recv.Hooks()) > 0 })
	clk.Run(clk.Now().Add(5 * time.Second))
	queued, err := e.Store.QueuedEvents(context.Background(), a.ID, 10)
	if err != nil || len(queued) != 0 {
		t.Errorf("queued events: got %d (%v), want none", len(queued), err)
	}
	for _, h := range recv.Hooks() {
		var m message
		if json.Unmarshal(h.Body, &m) == nil && m.Type != "push.undeliverable" {
			t.Errorf("message: got %s, want only push.undeliverable", h.Body)
		}
	}
}

// TestDeliveryEventsFailedPush: a push that fails as a whole (the token
// endpoint refuses the app's service account) ends every device it had
// not sent: each gets one push.failed, with the push's failure reason.
func TestDeliveryEventsFailedPush(t *testing.T) {
	t.Parallel()
	e, clk, a, recv := setup(t)
	e.PutCredentials(a, "denied-project")
	e.Register(a, "tok-abcdefghij-", "u1", "u2") // devices dev-u1-0, dev-u2-1
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1", "u2"}, Title: "t", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	p := e.WaitFinal(res.PushID, 10*time.Second)
	if p.Status != "failed" || p.FailureReason == "" {
		t.Fatalf("push: got %s (%q), want failed with a reason", p.Status, p.FailureReason)
	}
	testenv.WaitFor(t, "the push.failed events", 10*time.Second, func() bool {
		clk.Run(clk.Now().Add(time.Second))
		return len(recv.taken()) >= 2
	})
	clk.Run(clk.Now().Add(2 * time.Second))
	var keys []string
	for _, ev := range recv.taken() {
		keys = append(keys, key(ev))
		if ev.Type == "push.failed" && ev.Data.Reason != p.FailureReason {
			t.Errorf("%s: reason %q, want the push's %q", key(ev), ev.Data.Reason, p.FailureReason)
		}
	}
	slices.Sort(keys)
	if want := []string{"push.failed " + res.PushID + " dev-u1-0", "push.failed " + res.PushID + " dev-u2-1"}; !slices.Equal(keys, want) {
		t.Errorf("events: got %v, want %v", keys, want)
	}
}
