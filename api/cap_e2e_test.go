package api_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
)

// Frequency caps end to end (DESIGN 14, app setting marketingCap): the
// node runs on an injected clock that the tests move across the app's
// midnight and the 7-day boundary; the emulator keeps the real clock.

// capApp creates an app in Seoul with the cap given (nil: none), whose
// users consent to marketing at any hour, and registers one device per
// user, token "cap-"+app+"-"+user.
func capApp(t *testing.T, e *env, marketingCap map[string]any, users ...string) testenv.App {
	t.Helper()
	settings := map[string]any{"timeZone": "Asia/Seoul", "adPrefixCheck": false,
		"defaultConsent": map[string]any{"marketing": true, "marketingNight": true}}
	if marketingCap != nil {
		settings["marketingCap"] = marketingCap
	}
	a := e.NewApp(settings)
	e.Register(a, capToken(a, ""), users...)
	return a
}

// capToken is the token capApp registers for user.
func capToken(a testenv.App, user string) string { return "cap-" + a.ID[len(a.ID)-6:] + "-" + user }

// pushUsers sends a push to the users, marketing or not, and returns it
// once it has finished.
func pushUsers(t *testing.T, e *env, a testenv.App, marketing bool, users ...string) testenv.PushView {
	t.Helper()
	ids := make([]any, len(users))
	for i, u := range users {
		ids[i] = u
	}
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: ids, Title: "Sale", Content: "c",
		Options: &client.Options{IsMarketing: &marketing}})
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	return e.WaitFinal(res.PushID, 20*time.Second)
}

// wantCapCounts checks a finished push's sent and suppressedCap counts,
// and that the emulator received it on exactly the sent users' tokens.
func wantCapCounts(t *testing.T, e *env, a testenv.App, what string, p testenv.PushView, sent, capped []string) {
	t.Helper()
	if p.Status != "done" || p.Counts.Sent != len(sent) || p.Counts.SuppressedCap != len(capped) || p.Counts.Tokens != len(sent)+len(capped) {
		t.Errorf("%s: got %s %+v, want done, %d sent, %d suppressed by the cap", what, p.Status, p.Counts, len(sent), len(capped))
	}
	want := map[string]int{}
	for _, u := range sent {
		want[capToken(a, u)] = 1
	}
	if got := e.SentTo(p.PushID); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: messages by token: got %v, want %v", what, got, want)
	}
}

// TestMarketingCapDayAndWeek: with perDay 1 and perWeek 2, a second
// marketing push the same local day skips both users while a push that is
// not marketing reaches them; after the app's midnight (00:00 Seoul, not
// UTC's) a marketing push reaches them again; the next day the week's cap
// skips them until 7×24 h after the first push has passed, not a minute
// before.
func TestMarketingCapDayAndWeek(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	first := time.Date(2026, 12, 7, 12, 0, 0, 0, testenv.Seoul)
	clk.Run(first)
	e := start(t, testenv.Clocked(clk))
	a := capApp(t, e, map[string]any{"perDay": 1, "perWeek": 2}, "u1", "u2")
	both := []string{"u1", "u2"}

	wantCapCounts(t, e, a, "first marketing push", pushUsers(t, e, a, true, both...), both, nil)
	clk.Run(first.Add(11*time.Hour + 50*time.Minute)) // 23:50 the same day
	second := pushUsers(t, e, a, true, both...)
	wantCapCounts(t, e, a, "second marketing push the same day", second, nil, both)
	if got := exportOutcome(t, e, a, "u1", second.PushID); got != "suppressed_cap" {
		t.Errorf("u1's export: the second push's outcome is %q, want suppressed_cap", got)
	}
	wantCapCounts(t, e, a, "a push that is not marketing", pushUsers(t, e, a, false, both...), both, nil)

	clk.Run(first.Add(12*time.Hour + 10*time.Minute)) // 00:10 the next day in Seoul (15:10 UTC)
	wantCapCounts(t, e, a, "after the app's midnight", pushUsers(t, e, a, true, both...), both, nil)

	clk.Run(first.Add(7*24*time.Hour - time.Minute)) // two receipts in the last 7×24 h
	wantCapCounts(t, e, a, "a minute before the first push leaves the week", pushUsers(t, e, a, true, "u1"), nil, []string{"u1"})
	clk.Run(first.Add(7*24*time.Hour + time.Minute))
	wantCapCounts(t, e, a, "a minute after", pushUsers(t, e, a, true, "u1"), []string{"u1"}, nil)
}

// exportOutcome reads the outcome of push id in the user's export.
func exportOutcome(t *testing.T, e *env, a testenv.App, user, id string) string {
	t.Helper()
	var export struct {
		Pushes []struct{ PushID, Outcome string }
	}
	if code := e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/users/"+user+"/export?reason=test", nil, &export); code != 200 {
		t.Fatalf("export of %s: got %d, want 200", user, code)
	}
	for _, p := range export.Pushes {
		if p.PushID == id {
			return p.Outcome
		}
	}
	return ""
}

// TestMarketingCapFailedSendDoesNotCount: a marketing push whose only
// token FCM answers UNREGISTERED sends the user nothing, so it does not
// count: with perDay 1, the user's next marketing push, to a device
// registered since, reaches them.
func TestMarketingCapFailedSendDoesNotCount(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	clk.Run(time.Date(2026, 12, 8, 12, 0, 0, 0, testenv.Seoul))
	e := start(t, testenv.Clocked(clk))
	a := capApp(t, e, map[string]any{"perDay": 1})
	ctx := context.Background()
	if _, err := a.Client.RegisterPushToken(ctx, client.RegisterRequest{DeviceID: "dead", Token: "unregistered-" + a.ID,
		Platform: "android", AppSourceVersion: "1.6.0", UserID: "u1"}); err != nil {
		t.Fatal(err)
	}
	p := pushUsers(t, e, a, true, "u1")
	if p.Counts.Failed != 1 || p.Counts.Sent != 0 || p.Counts.SuppressedCap != 0 {
		t.Fatalf("push to the dead token: got %+v, want 1 failed", p.Counts)
	}
	e.Register(a, capToken(a, ""), "u1")
	wantCapCounts(t, e, a, "the next marketing push", pushUsers(t, e, a, true, "u1"), []string{"u1"}, nil)
	wantCapCounts(t, e, a, "and the one after", pushUsers(t, e, a, true, "u1"), nil, []string{"u1"})
}

// TestMarketingCapBurst: several marketing pushes to the same users,
// accepted at once, at perDay 1: each user receives exactly one of them,
// and the pushes' suppressedCap counts the rest. On PostgreSQL a second
// node on the same database takes half the pushes, and both nodes' workers
// send them.
func TestMarketingCapBurst(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	clk.Run(time.Date(2026, 12, 9, 12, 0, 0, 0, testenv.Seoul))
	e := start(t, testenv.Clocked(clk))
	apis := []string{e.API.URL}
	if e.Engine == testenv.Postgres {
		o := testenv.Clocked(clk)
		o.DatabaseURL, o.MasterKey, o.EmulatorOf = e.DatabaseURL, e.MasterKey, e.Env
		o.Config.FCM.Client.AllowAnyTokenURI = true
		second := testenv.New(t, o)
		apis = append(apis, second.API.URL)
	}
	const nUsers, nPushes = 30, 5
	users := make([]string, nUsers)
	ids := make([]any, nUsers)
	for i := range users {
		users[i] = fmt.Sprintf("u%02d", i)
		ids[i] = users[i]
	}
	a := capApp(t, e, map[string]any{"perDay": 1}, users...)
	pushes := burst(t, a, apis, nPushes, ids)
	sent, capped := 0, 0
	perToken := map[string]int{}
	for _, id := range pushes {
		p := e.WaitFinal(id, 30*time.Second)
		sent, capped = sent+p.Counts.Sent, capped+p.Counts.SuppressedCap
		for tok, n := range e.SentTo(id) {
			perToken[tok] += n
		}
	}
	for _, u := range users {
		if n := perToken[capToken(a, u)]; n != 1 {
			t.Errorf("user %s received %d of the burst's pushes, want 1", u, n)
		}
	}
	if sent != nUsers || capped != nUsers*(nPushes-1) {
		t.Errorf("counts: %d sent and %d suppressed by the cap, want %d and %d", sent, capped, nUsers, nUsers*(nPushes-1))
	}
}

// burst sends n marketing pushes to the users at once, through each of
// the nodes' public listeners in turn, and returns their ids.
func burst(t *testing.T, a testenv.App, apis []string, n int, users []any) []string {
	t.Helper()
	yes := true
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c := client.New(apis[i%len(apis)], a.APIKey, a.SecretKey, nil)
			res, err := c.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: users, Title: "Sale", Content: "c",
				Options: &client.Options{IsMarketing: &yes}})
			ids[i], errs[i] = res.PushID, err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("push: %v", err)
		}
	}
	return ids
}

// TestMarketingCapAllAndMessages: the cap holds on an all-users push (its
// users found through their devices: a device no user is mapped to is
// never capped) and on /messages, each message judged by its own title;
// at perDay 1, after a push to u1 alone.
func TestMarketingCapAllAndMessages(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	clk.Run(time.Date(2026, 12, 10, 12, 0, 0, 0, testenv.Seoul))
	e := start(t, testenv.Clocked(clk))
	a := capApp(t, e, map[string]any{"perDay": 1}, "u1", "u2")
	ctx := context.Background()
	anonymous := capToken(a, "anonymous")
	if _, err := a.Client.RegisterPushToken(ctx, client.RegisterRequest{DeviceID: "anon", Token: anonymous, Platform: "android",
		AppSourceVersion: "1.6.0"}); err != nil {
		t.Fatal(err)
	}
	wantCapCounts(t, e, a, "a push to u1", pushUsers(t, e, a, true, "u1"), []string{"u1"}, nil)

	yes := true
	all, err := a.Client.PushAll(ctx, client.PushAllRequest{Title: "Sale", Content: "c", Options: &client.Options{IsMarketing: &yes}})
	if err != nil {
		t.Fatal(err)
	}
	p := e.WaitFinal(all.PushID, 20*time.Second)
	want := map[string]int{capToken(a, "u2"): 1, anonymous: 1}
	if got := e.SentTo(all.PushID); p.Counts.Sent != 2 || p.Counts.SuppressedCap != 1 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("all users: got %+v sent to %v, want u2 and the anonymous device sent, u1 suppressed by the cap", p.Counts, got)
	}

	// Both users are at the cap now: u1's message is not marketing and
	// reaches them, u2's carries the (광고) prefix and skips them.
	msgs, err := a.Client.PushMessages(ctx, client.PushMessagesRequest{Messages: []client.Message{
		{UserID: "u1", Title: "Your order shipped", Content: "c"}, {UserID: "u2", Title: "(광고) Sale", Content: "c"}}})
	if err != nil {
		t.Fatal(err)
	}
	wantCapCounts(t, e, a, "messages", e.WaitFinal(msgs.PushID, 20*time.Second), []string{"u1"}, []string{"u2"})
}
