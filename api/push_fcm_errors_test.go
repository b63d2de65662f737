package api_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/server"
)

// TestPushFCMErrors sends one push to users whose tokens draw each of FCM's
// answers from the emulator and checks what Herald makes of each.
func TestPushFCMErrors(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	for user, token := range map[string]string{
		"unreg": "unregistered-1", "inval": "invalid-1", "mism": "mismatch-1",
		"quota": "quota-1", "unavail": "unavailable-1", "fine": "fine-1",
	} {
		e.Device(a, "dev-"+user, token, "android", "1.6.0", user)
	}
	// "both" has one working and one dead device: it is reached.
	e.Device(a, "dev-both-ok", "both-ok", "ios", "1.6.0", "both")
	e.Device(a, "dev-both-dead", "unregistered-both", "android", "1.6.0", "both")
	// "bare" registered a device, then removed its token: no token left.
	e.Device(a, "dev-bare", "bare-1", "android", "1.6.0", "bare")
	if err := a.Client.DeletePushToken(context.Background(), "dev-bare"); err != nil {
		t.Fatalf("delete token: %v", err)
	}

	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{
		UserIDs: []any{"unreg", "inval", "mism", "quota", "unavail", "fine", "both", "bare", "ghost"},
		Title:   "t", Content: "c", Options: &client.Options{RequestGroupID: "fcm-errors"},
	})
	if err != nil {
		t.Fatalf("push: got %v, want nil", err)
	}
	p := e.WaitFinal(res.PushID, 30*time.Second)

	t.Run("Done", func(t *testing.T) {
		if p.Status != "done" || p.FailureReason != "" {
			t.Errorf("status: got %s %q, want done", p.Status, p.FailureReason)
		}
		c := p.Counts
		if c.RequestedUsers != 9 || c.Tokens != 8 || c.Sent != 4 || c.Failed != 4 || c.Unreachable != 5 {
			t.Errorf("counts: got %+v, want requested 9 tokens 8 sent 4 failed 4 unreachable 5", c)
		}
	})
	t.Run("Unreachable", func(t *testing.T) {
		got := map[string]string{}
		for _, u := range p.UnreachableUsers {
			got[u.UserID] = u.Reason
		}
		want := map[string]string{
			"unreg": "APP_DELETED", "inval": "TOKEN_EXPIRED", "mism": "TOKEN_EXPIRED",
			"bare": "NO_TOKEN", "ghost": "NO_TOKEN",
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || len(p.UnreachableUsers) != len(want) {
			t.Errorf("unreachable users: got %v, want %v", p.UnreachableUsers, want)
		}
	})
	t.Run("DeadTokensDeleted", func(t *testing.T) {
		for _, user := range []string{"unreg", "inval", "mism"} {
			if u := e.UserView(a, user); len(u.Devices) != 0 {
				t.Errorf("devices of %s: got %+v, want none", user, u.Devices)
			}
		}
		u := e.UserView(a, "both")
		if len(u.Devices) != 1 || u.Devices[0].DeviceID != "dev-both-ok" {
			t.Errorf("devices of both: got %+v, want only dev-both-ok", u.Devices)
		}
		for _, user := range []string{"quota", "unavail", "fine"} {
			if u := e.UserView(a, user); len(u.Devices) != 1 {
				t.Errorf("devices of %s: got %d, want 1", user, len(u.Devices))
			}
		}
	})
	t.Run("RetriedAndDeliveredOnce", func(t *testing.T) {
		got := e.SentTo(res.PushID)
		want := map[string]int{"quota-1": 1, "unavailable-1": 1, "fine-1": 1, "both-ok": 1}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("messages by token: got %v, want %v", got, want)
		}
		// Each retried token was sent twice: refused, then accepted.
		if s := e.Emulator.Stats(); s.Received != 10 || s.Accepted != 4 {
			t.Errorf("emulator: got %+v, want received 10 accepted 4", s)
		}
	})
	t.Run("Failures", func(t *testing.T) {
		var users []string
		for _, f := range p.Failures {
			users = append(users, f.UserID)
			if f.Error == "" || len(f.Token) > 8 {
				t.Errorf("failure %+v: want an error and a shortened token", f)
			}
		}
		sort.Strings(users)
		if want := "[both inval mism unreg]"; fmt.Sprint(users) != want {
			t.Errorf("failed users: got %v, want %s", users, want)
		}
	})
	t.Run("NoSecondSendToDeletedTokens", func(t *testing.T) {
		again, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"unreg", "both"}, Title: "t", Content: "c"})
		if err != nil {
			t.Fatalf("push: got %v, want nil", err)
		}
		q := e.WaitFinal(again.PushID, 10*time.Second)
		if q.Counts.Tokens != 1 || q.Counts.Sent != 1 || len(q.UnreachableUsers) != 1 || q.UnreachableUsers[0].Reason != "NO_TOKEN" {
			t.Errorf("push: got counts %+v unreachable %v, want 1 token sent and unreg NO_TOKEN", q.Counts, q.UnreachableUsers)
		}
	})
}

// TestPushFCMTimeoutRetried: a send that FCM does not answer within the
// request timeout is given up, its stream reset, and retried as a network
// error is (DESIGN: a timeout is retried); the user gets the message once.
func TestPushFCMTimeoutRetried(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var held atomic.Bool
	e := start(t, testenv.Options{Overrides: server.Overrides{FCMTimeout: 300 * time.Millisecond}, Emulator: emulator.Options{
		BeforeAnswer: func(token string) {
			if token == "slow-1" && held.CompareAndSwap(false, true) {
				<-release // the first send stays unanswered past the timeout
			}
		},
	}})
	t.Cleanup(func() { close(release) }) // before the node stops
	a := e.NewApp(nil)
	e.Device(a, "dev-slow", "slow-1", "android", "1.6.0", "slow")
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"slow"}, Title: "t", Content: "c"})
	if err != nil {
		t.Fatalf("push: got %v, want nil", err)
	}
	p := e.WaitFinal(res.PushID, 30*time.Second)
	if c := p.Counts; p.Status != "done" || c.Sent != 1 || c.Failed != 0 || c.Unreachable != 0 {
		t.Errorf("push: got %s with %+v, want done, sent 1", p.Status, c)
	}
	if !held.Load() {
		t.Fatal("the first send was never held")
	}
	if got := e.SentTo(res.PushID); fmt.Sprint(got) != "map[slow-1:1]" {
		t.Errorf("messages by token: got %v, want the retry's alone", got)
	}
}

// TestPushAuthFailures: a THIRD_PARTY_AUTH_ERROR (the project's APNs or
// web-push credentials) fails that delivery only and warns the operator; a
// push fails as a whole, with the reason, when the token endpoint refuses
// its service account.
func TestPushAuthFailures(t *testing.T) {
	t.Parallel()
	e := start(t)

	t.Run("ThirdPartyAuthError", func(t *testing.T) {
		a := e.NewApp(nil)
		e.Device(a, "dev-ios", "auth-ios", "ios", "1.6.0", "u1")
		e.Device(a, "dev-android", "fine-android", "android", "1.6.0", "u1")
		e.Device(a, "dev-u2", "fine-u2", "android", "1.6.0", "u2")
		res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1", "u2"}, Title: "t", Content: "c"})
		if err != nil {
			t.Fatalf("push: got %v, want nil", err)
		}
		p := e.WaitFinal(res.PushID, 10*time.Second)
		if p.Status != "done" || p.FailureReason != "" {
			t.Errorf("push: got status %s reason %q, want done", p.Status, p.FailureReason)
		}
		if c := p.Counts; c.Tokens != 3 || c.Sent != 2 || c.Failed != 1 || c.Unreachable != 0 {
			t.Errorf("counts: got %+v, want 3 tokens, 2 sent, 1 failed, none unreachable", c)
		}
		if len(p.Failures) != 1 || p.Failures[0].UserID != "u1" || !strings.Contains(p.Failures[0].Error, "THIRD_PARTY_AUTH_ERROR") {
			t.Errorf("failures: got %+v, want u1's ios token failed with THIRD_PARTY_AUTH_ERROR", p.Failures)
		}
		if got := e.SentTo(res.PushID); got["fine-android"] != 1 || got["fine-u2"] != 1 || len(got) != 2 {
			t.Errorf("messages by token: got %v, want one to each android token", got)
		}
		if u := e.UserView(a, "u1"); len(u.Devices) != 2 {
			t.Errorf("devices: got %d, want 2 (an auth error says nothing about the token)", len(u.Devices))
		}
		if logs := e.Log.String(); !strings.Contains(logs, "FCM refused the app's credentials") || !strings.Contains(logs, res.PushID) {
			t.Errorf("logs: want a warning naming push %s:\n%s", res.PushID, logs)
		}
		if page := e.dashboardPage("/apps/" + a.ID); !strings.Contains(page, `id="fcm-warning"`) || !strings.Contains(page, "APNs or web-push") {
			t.Errorf("app page: want the FCM warning:\n%s", page)
		}
	})
	// FCM's legacy spelling of THIRD_PARTY_AUTH_ERROR is the same error.
	t.Run("LegacyApnsAuthError", func(t *testing.T) {
		a := e.NewApp(nil)
		e.Device(a, "dev-ios", "apnsauth-ios", "ios", "1.6.0", "u1")
		e.Device(a, "dev-u2", "fine-u2", "android", "1.6.0", "u2")
		res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1", "u2"}, Title: "t", Content: "c"})
		if err != nil {
			t.Fatalf("push: got %v, want nil", err)
		}
		p := e.WaitFinal(res.PushID, 10*time.Second)
		if p.Status != "done" || p.FailureReason != "" {
			t.Errorf("push: got status %s reason %q, want done", p.Status, p.FailureReason)
		}
		if c := p.Counts; c.Tokens != 2 || c.Sent != 1 || c.Failed != 1 {
			t.Errorf("counts: got %+v, want 2 tokens, 1 sent, 1 failed", c)
		}
		if len(p.Failures) != 1 || p.Failures[0].UserID != "u1" || !strings.Contains(p.Failures[0].Error, "APNS_AUTH_ERROR") {
			t.Errorf("failures: got %+v, want u1's ios token failed with APNS_AUTH_ERROR", p.Failures)
		}
		if got := e.SentTo(res.PushID); got["fine-u2"] != 1 || len(got) != 1 {
			t.Errorf("messages by token: got %v, want one to fine-u2", got)
		}
		if page := e.dashboardPage("/apps/" + a.ID); !strings.Contains(page, `id="fcm-warning"`) || !strings.Contains(page, "APNs or web-push") {
			t.Errorf("app page: want the FCM warning:\n%s", page)
		}
	})
	t.Run("DeniedProject", func(t *testing.T) {
		a := e.NewAppWithoutFCM(nil)
		e.PutCredentials(a, "denied-project")
		e.Register(a, "deny-", "u1", "u2")
		res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1", "u2"}, Title: "t", Content: "c"})
		if err != nil {
			t.Fatalf("push: got %v, want nil", err)
		}
		p := e.WaitFinal(res.PushID, 10*time.Second)
		if p.Status != "failed" || !strings.Contains(p.FailureReason, "invalid_grant") {
			t.Errorf("push: got status %s reason %q, want failed naming the token endpoint's invalid_grant", p.Status, p.FailureReason)
		}
		if got := e.SentTo(res.PushID); len(got) != 0 {
			t.Errorf("messages: got %v, want none", got)
		}
	})
}
