package main

import (
	"context"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
)

// TestEngine names the store this run of the end-to-end tests is on
// (TestEngine/sqlite or TestEngine/postgres) and sends one push through it.
func TestEngine(t *testing.T) {
	t.Parallel()
	t.Run(testEngine(), func(t *testing.T) {
		e := start(t)
		a := e.NewApp(nil)
		e.Register(a, "tok-", "u1")
		res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "t", Content: "c"})
		if err != nil {
			t.Fatalf("push: %v", err)
		}
		if p := e.WaitFinal(res.PushID, 30*time.Second); p.Status != "done" || p.Counts.Sent != 1 {
			t.Errorf("push: got %s with %+v, want done with 1 sent", p.Status, p.Counts)
		}
		if ready := e.ServerDo("GET", "/readyz", nil, nil); ready.Status != 200 {
			t.Errorf("/readyz: got %d %s, want 200", ready.Status, ready.Body)
		}
	})
}
