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

// TestNightDeferralCancel: the operator cancels the deferred part at
// 07:50: its users count as suppressed by the night, are refunded in the
// ledger and the push's Server Actions, and the push ends done; within 5
// minutes of 08:00 the cancel is refused 409 and nothing changes.
func TestNightDeferralCancel(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	morning := time.Date(2026, 12, 5, 8, 0, 0, 0, testenv.Seoul)
	clk.Run(morning.Add(-10 * time.Minute))
	e := start(t, testenv.Clocked(clk))
	a := testenv.ConsentApp(t, e.Harness, "Asia/Seoul")
	id := testenv.PushDefer(t, a, "none", "day", "all")
	if v := testenv.WantDeferredPush(t, e.Harness, a, id, morning, 1); v.ServerActions != 1.5 || e.Usage(a) != 1.5 {
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
	late := testenv.PushDefer(t, a, "none", "day", "all")
	testenv.WantDeferredPush(t, e.Harness, a, late, morning, 1)
	clk.Run(morning.Add(-5*time.Minute + time.Second))
	refused.Code = ""
	if code := e.AdminJSON("POST", "/admin/v1/pushes/"+late+"/cancel", nil, &refused); code != http.StatusConflict || refused.Code != "ERR-AB-SCH-01" {
		t.Errorf("cancel at 07:55:01: got %d %s, want 409 ERR-AB-SCH-01", code, refused.Code)
	}
	if v := e.NightPush(late); v.Status != "sending" || v.Counts.DeferredNight != 1 || v.ServerActions != 1.5 || e.Usage(a) != 2.5 {
		t.Errorf("after the refused cancel: got %+v, usage %v; want still deferred, 1.5 on the push, 2.5 in the ledger", v, e.Usage(a))
	}
	testenv.WantDelivered(t, e.Harness, a, id, "all")
}

// TestNightDeferralAllAndMessages: deferral on /all (charged per user as
// it fans out) and on a mixed /messages request (each message marketing
// by its own title), each cancelled at 07:50 with its refund.
func TestNightDeferralAllAndMessages(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	morning := time.Date(2026, 12, 6, 8, 0, 0, 0, testenv.Seoul)
	clk.Run(morning.Add(-10 * time.Minute))
	e := start(t, testenv.Clocked(clk))
	a := testenv.ConsentApp(t, e.Harness, "Asia/Seoul")
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
		if v := testenv.WantDeferredPush(t, e.Harness, a, id, morning, 1); v.ServerActions != 1.5 {
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
