package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"

	"github.com/heraldpush/herald/client"
)

// The night deferral end to end (options.nightPolicy "defer"): the service
// runs on an injected clock set shortly before 08:00 in Seoul, so the
// morning comes within seconds; the emulator keeps the real clock.

// nightApp is consentApp in Seoul ("none", "day", "all") with two more
// users of marketing consent by day only: "late", who gives night consent
// before the morning, and "quit", who withdraws marketing consent by then.
func nightApp(t *testing.T, e *env) testenv.App {
	t.Helper()
	a := consentApp(t, e, "Asia/Seoul")
	e.Register(a, "cons-"+a.ID[len(a.ID)-6:]+"-", "late", "quit")
	on := true
	for _, u := range []string{"late", "quit"} {
		if _, err := a.Client.SetMarketing(context.Background(), u, client.MarketingState{Marketing: &on}); err != nil {
			t.Fatalf("consent of %s: %v", u, err)
		}
	}
	return a
}

// pushDefer sends a marketing push with nightPolicy defer to users.
func pushDefer(t *testing.T, a testenv.App, users ...any) string {
	t.Helper()
	yes := true
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: users, Title: "Night sale", Content: "50% off",
		Options: &client.Options{IsMarketing: &yes, NightPolicy: "defer"}})
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	return res.PushID
}

// wantDeferred waits for the push's night-consent device ("all") and
// checks that n tokens wait for the morning.
func wantDeferredPush(t *testing.T, e *env, a testenv.App, id string, morning time.Time, n int) testenv.NightView {
	t.Helper()
	testenv.WaitFor(t, "the night-consent device", 20*time.Second, func() bool { return len(e.SentTo(id)) == 1 })
	wantDelivered(t, e, a, id, "all")
	v := e.NightPush(id)
	if v.Status != "sending" || v.NightPolicy != "defer" || v.Counts.DeferredNight != n || v.DeferredUntil == nil ||
		!v.DeferredUntil.Equal(morning) || v.Counts.SuppressedConsent != 1 || v.Counts.SuppressedNight != 0 {
		t.Fatalf("before the morning: got %+v (until %v), want sending, %d deferred until %v, 1 suppressed by consent", v,
			v.DeferredUntil, n, morning)
	}
	return v
}

// morningChanges makes "late" give night consent and "quit" withdraw
// marketing consent, and fails unless that happened before the morning.
func morningChanges(t *testing.T, clk *testenv.Clock, a testenv.App, morning time.Time) {
	t.Helper()
	on, off := true, false
	if _, err := a.Client.SetMarketing(context.Background(), "late", client.MarketingState{Marketing: &on, MarketingNight: &on}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Client.SetMarketing(context.Background(), "quit", client.MarketingState{Marketing: &off}); err != nil {
		t.Fatal(err)
	}
	if !clk.Now().Before(morning) {
		t.Fatalf("the consent changes came after the morning (%v): the machine is too slow for this test", clk.Now())
	}
}

// wantMorning checks the push after its morning: "all" sent at once,
// "day" and "late" at 08:00 each once, "quit" suppressed, the charge kept.
func wantMorning(t *testing.T, e *env, clk *testenv.Clock, a testenv.App, id string, morning time.Time) {
	t.Helper()
	p := e.WaitFinal(id, 60*time.Second)
	wantDelivered(t, e, a, id, "all", "day", "late")
	v := e.NightPush(id)
	if v.Status != "done" || v.Counts.Tokens != 5 || v.Counts.Sent != 3 || v.Counts.SuppressedConsent != 2 ||
		v.Counts.SuppressedNight != 0 || v.Counts.DeferredNight != 0 || v.DeferredUntil != nil || v.ServerActions != 2.5 {
		t.Errorf("after the morning: got %s %+v (until %v), want done, 5 tokens, 3 sent, 2 suppressed by consent, 2.5 Server Actions",
			p.Status, v, v.DeferredUntil)
	}
	for _, u := range []string{"day", "late"} {
		msgs := e.Received("cons-" + a.ID[len(a.ID)-6:] + "-" + u)
		if len(msgs) != 1 {
			t.Fatalf("%s: got %d messages, want 1", u, len(msgs))
		}
		if at := clk.Fake(msgs[0].ReceivedAt); at.Before(morning) {
			t.Errorf("%s: sent at %v, before the morning %v", u, at, morning)
		}
	}
}

// TestNightDeferralAtEight: a marketing push with nightPolicy defer at
// 07:59:48 in Seoul goes at once to the device with night consent, counts
// the day-only ones as deferred until 08:00, and sends them at 08:00 of the
// injected clock, their consent judged again then.
func TestNightDeferralAtEight(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	morning := time.Date(2026, 12, 2, 8, 0, 0, 0, seoul)
	clk.Run(morning.Add(-time.Hour))
	e := start(t, testenv.Clocked(clk))
	a := nightApp(t, e)
	clk.Run(morning.Add(-12 * time.Second)) // the app is set up: the morning comes soon after the push
	id := pushDefer(t, a, "none", "day", "all", "late", "quit")
	wantDeferredPush(t, e, a, id, morning, 3)
	morningChanges(t, clk, a, morning)
	wantMorning(t, e, clk, a, id, morning)
	if got := e.Usage(a); got != 2.5 {
		t.Errorf("usage: got %v Server Actions, want 2.5 (charged once)", got)
	}
}

// TestNightDeferralCancel: the operator cancels the deferred part at
// 07:50: its users count as suppressed by the night, are refunded in the
// ledger and the push's Server Actions, and the push ends done; within 5
// minutes of 08:00 the cancel is refused 409 and nothing changes.
func TestNightDeferralCancel(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	morning := time.Date(2026, 12, 5, 8, 0, 0, 0, seoul)
	clk.Run(morning.Add(-10 * time.Minute))
	e := start(t, testenv.Clocked(clk))
	a := consentApp(t, e, "Asia/Seoul")
	id := pushDefer(t, a, "none", "day", "all")
	if v := wantDeferredPush(t, e, a, id, morning, 1); v.ServerActions != 1.5 || e.Usage(a) != 1.5 {
		t.Fatalf("charge: got %v on the push, %v in the ledger, want 1.5", v.ServerActions, e.Usage(a))
	}
	var answer testenv.NightView
	if code := e.AdminJSON("POST", "/admin/v1/pushes/"+id+"/cancel", nil, &answer); code != http.StatusOK {
		t.Fatalf("cancel at 07:50: got %d, want 200", code)
	}
	if answer.Counts.SuppressedNight != 1 || answer.Counts.DeferredNight != 0 || answer.ServerActions != 1 {
		t.Errorf("cancel answer: got %+v, want 1 suppressed by the night, none deferred, 1 Server Action", answer)
	}
	e.WaitFinal(id, 20*time.Second)
	v := e.NightPush(id)
	if v.Status != "done" || v.Counts.Sent != 1 || v.Counts.SuppressedNight != 1 || v.Counts.SuppressedConsent != 1 || v.ServerActions != 1 {
		t.Errorf("after the cancel: got %+v, want done, 1 sent, 1 suppressed each way, 1 Server Action", v)
	}
	if got := e.Usage(a); got != 1 {
		t.Errorf("usage: got %v, want 1.5 charged less 0.5 refunded", got)
	}
	var refused struct{ Code string }
	if code := e.AdminJSON("POST", "/admin/v1/pushes/"+id+"/cancel", nil, &refused); code != http.StatusConflict || refused.Code != "ERR-AB-SCH-01" {
		t.Errorf("cancel again: got %d %s, want 409 ERR-AB-SCH-01", code, refused.Code)
	}

	// A second push, cancelled at 07:55:01: too late.
	late := pushDefer(t, a, "none", "day", "all")
	wantDeferredPush(t, e, a, late, morning, 1)
	clk.Run(morning.Add(-5*time.Minute + time.Second))
	refused.Code = ""
	if code := e.AdminJSON("POST", "/admin/v1/pushes/"+late+"/cancel", nil, &refused); code != http.StatusConflict || refused.Code != "ERR-AB-SCH-01" {
		t.Errorf("cancel at 07:55:01: got %d %s, want 409 ERR-AB-SCH-01", code, refused.Code)
	}
	if v := e.NightPush(late); v.Status != "sending" || v.Counts.DeferredNight != 1 || v.ServerActions != 1.5 || e.Usage(a) != 2.5 {
		t.Errorf("after the refused cancel: got %+v, usage %v; want still deferred, 1.5 on the push, 2.5 in the ledger", v, e.Usage(a))
	}
	wantDelivered(t, e, a, id, "all")
}

// TestNightDeferralAllAndMessages: deferral on /all (charged per user as
// it fans out) and on a mixed /messages request (each message marketing
// by its own title), each cancelled at 07:50 with its refund.
func TestNightDeferralAllAndMessages(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	morning := time.Date(2026, 12, 6, 8, 0, 0, 0, seoul)
	clk.Run(morning.Add(-10 * time.Minute))
	e := start(t, testenv.Clocked(clk))
	a := consentApp(t, e, "Asia/Seoul")
	yes, ctx := true, context.Background()
	all, err := a.Client.PushAll(ctx, client.PushAllRequest{Title: "Night sale", Content: "c",
		Options: &client.Options{IsMarketing: &yes, NightPolicy: "defer"}})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := a.Client.PushMessages(ctx, client.PushMessagesRequest{Messages: []client.Message{
		{UserID: "none", Title: "(광고) for none", Content: "c"}, {UserID: "day", Title: "(광고) for day", Content: "c"},
		{UserID: "all", Title: "Your receipt", Content: "not an ad"}}, Options: &client.Options{NightPolicy: "defer"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{all.PushID, msgs.PushID} {
		if v := wantDeferredPush(t, e, a, id, morning, 1); v.ServerActions != 1.5 {
			t.Fatalf("push %s: got %v Server Actions, want 1.5", id, v.ServerActions)
		}
		var answer testenv.NightView
		if code := e.AdminJSON("POST", "/admin/v1/pushes/"+id+"/cancel", nil, &answer); code != http.StatusOK {
			t.Fatalf("cancel %s: got %d, want 200", id, code)
		}
		e.WaitFinal(id, 20*time.Second)
		if v := e.NightPush(id); v.Status != "done" || v.Counts.SuppressedNight != 1 || v.Counts.Sent != 1 || v.ServerActions != 1 {
			t.Errorf("push %s after the cancel: got %+v, want done, 1 sent, 1 suppressed by the night, 1 Server Action", id, v)
		}
	}
	if got := e.Usage(a); got != 2 {
		t.Errorf("usage: got %v, want 3 charged less 1 refunded", got)
	}
}
