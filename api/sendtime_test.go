package api_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
)

// TestSendTimeChecks changes users while their push is on its way: the
// first wave (a window of sends) is slowed by the emulator, and the second
// wave is judged again when it goes out.
func TestSendTimeChecks(t *testing.T) {
	t.Parallel()
	e := start(t, testenv.Options{Emulator: emulator.Options{Latency: 2 * time.Second}})
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true, "timeZone": dayZone()})
	users := make([]any, window+10)
	for i := range users {
		u := fmt.Sprintf("u%d", i)
		users[i] = u
		e.Register(a, "tok-", u)
		if _, err := a.Client.SetMarketing(context.Background(), u, client.MarketingState{Marketing: ptr(true)}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: users, Title: "(광고) sale", Content: "now"})
	if err != nil {
		t.Fatal(err)
	}
	// The emulator counts a message when it answers, after its latency: the
	// first window of sends is under way once the server marked it in
	// flight (its chunk's in-flight range).
	testenv.WaitFor(t, "the first wave", 10*time.Second, func() bool {
		var n int
		e.QueryRow(`SELECT marked - settled FROM push_chunks WHERE push_id = ?`, res.PushID).Scan(&n)
		return n == window
	})
	withdrawn, optedOut := fmt.Sprintf("u%d", window+5), fmt.Sprintf("u%d", window+6)
	if _, err := a.Client.DeleteUser(context.Background(), withdrawn); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Client.SetMarketing(context.Background(), optedOut, client.MarketingState{Marketing: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	p := e.WaitFinal(res.PushID, 20*time.Second)
	if nw, no := len(e.Emulator.Messages("tok-"+withdrawn)), len(e.Emulator.Messages("tok-"+optedOut)); nw != 0 || no != 0 {
		t.Fatalf("messages to the withdrawn user: got %d, to the opted-out user: got %d, want none (%s)", nw, no, e.Log.String())
	}
	if p.Counts.Sent != len(users)-2 || p.Counts.SuppressedConsent != 1 || p.Counts.Unreachable != 1 {
		t.Fatalf("counts: got %+v, want %d sent, 1 suppressed by consent, 1 unreachable", p.Counts, len(users)-2)
	}
}

func ptr[T any](v T) *T { return &v }

// dayZone names a fixed zone where it is daytime now.
func dayZone() string {
	for off := -12; off <= 12; off++ {
		name := fmt.Sprintf("Etc/GMT%+d", -off)
		if off == 0 {
			name = "Etc/GMT"
		}
		loc, err := time.LoadLocation(name)
		if err != nil {
			continue
		}
		if h := time.Now().In(loc).Hour(); h >= 10 && h < 19 {
			return name
		}
	}
	return "UTC"
}
