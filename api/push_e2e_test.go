package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"

	"github.com/heraldpush/herald/client"
)

func TestPushUsersEndToEnd(t *testing.T) {
	e := start(t)
	a := e.NewApp(map[string]any{"tier": "business"})
	e.Register(a, "tok-", "u1", "u2", "u3")
	badge := true
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{
		UserIDs: []any{"u1", "u2", "u3", "ghost"}, Title: "Hello", Content: "World",
		LinkURL: "https://example.com/x", ImageURL: "https://example.com/i.png",
		Options: &client.Options{IsUsingBadge: &badge, RequestGroupID: "grp-1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Message != "Push has been requested to be sent." || res.PushID == "" {
		t.Fatalf("got %+v", res)
	}
	testenv.WaitFor(t, "3 messages", 10*time.Second, func() bool { return e.Emulator.Stats().Accepted == 3 })
	msgs := e.Emulator.Messages("tok-u1")
	if len(msgs) != 1 {
		t.Fatalf("got %d messages for tok-u1, want 1", len(msgs))
	}
	var m map[string]any
	json.Unmarshal(msgs[0].Message, &m)
	t.Logf("%s", msgs[0].Message)
	testenv.WaitFor(t, "push done", 10*time.Second, func() bool { return e.Push(res.PushID).Status == "done" })
	p := e.Push(res.PushID)
	if p.Counts.Sent != 3 || p.Counts.Unreachable != 1 || p.Counts.RequestedUsers != 4 {
		t.Fatalf("counts %+v", p.Counts)
	}
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1", "u2")
	e.Register(a, "unregistered-", "u3")
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1", "u2", "u3"}, Title: "t", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "push done", 10*time.Second, func() bool { return e.Push(res.PushID).Status == "done" })
	resp, err := http.Get(e.Admin.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`herald_fcm_sends_total{outcome="sent"} 2`,
		`herald_fcm_sends_total{outcome="undeliverable"} 1`,
		`herald_http_request_duration_seconds_count{listener="public",method="POST",route="POST /api/push/v2/users",status="200"} 1`,
		`herald_jobs{kind="herald.fanout",state=`, // a lone chunk's fan-out job sends it
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics: missing %q", want)
		}
	}
}
