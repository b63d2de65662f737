package admin_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

// adminDo sends a raw request to the admin API with the admin token.
func (e *env) adminDo(method, path string, body any) testenv.Response {
	e.T.Helper()
	return testenv.Send(e.T, http.DefaultClient, e.Admin.URL, testenv.Request{Method: method, URL: path,
		Header: map[string]string{"Authorization": "Bearer " + testenv.AdminToken}, Body: body})
}

// TestTestPush: POST /admin/v1/apps/{appId}/test-push sends one push to one
// user through the whole pipeline (FCM, history) and charges nothing.
func TestTestPush(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	e.Device(a, "d1", "test-push-token", "android", "1.6.0", "u1")
	path := "/admin/v1/apps/" + a.ID + "/test-push"

	var out struct{ PushID string }
	res := e.adminDo("POST", path, map[string]any{"userId": "u1", "title": "Test from the operator", "content": "Does it arrive?"})
	if res.Status != http.StatusOK {
		t.Fatalf("test push: got %d %s, want 200", res.Status, res.Body)
	}
	res.Decode(t, &out)
	p := e.WaitFinal(out.PushID, 20*time.Second)
	if p.Status != "done" || p.Counts.Sent != 1 || p.ServerActions != 0 || p.Kind != "users" {
		t.Fatalf("test push: got %+v, want a users push done with 1 sent and 0 Server Actions", p)
	}
	got := e.Received("test-push-token")
	if len(got) != 1 || !strings.Contains(string(got[0].Message), "Test from the operator") || !strings.Contains(string(got[0].Message), out.PushID) {
		t.Fatalf("emulator: got %d messages, want the test push", len(got))
	}
	if u := e.Usage(a); u != 0 {
		t.Errorf("usage after a test push: got %v Server Actions, want 0", u)
	}
	// A number is the same user as its text, as on the Server API.
	e.Device(a, "d2", "test-push-token-2", "android", "1.6.0", 42)
	if res := e.adminDo("POST", path, `{"userId":42,"title":"t","content":"c"}`); res.Status != http.StatusOK {
		t.Errorf("userId as a number: got %d %s, want 200", res.Status, res.Body)
	}

	// Each bad body is refused naming the member, and nothing is sent.
	before := len(e.PushList(a))
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"Both", map[string]any{"token": "x", "userId": "u1", "title": "t", "content": "c"}, "token"},
		{"BothTokenEmpty", map[string]any{"token": "", "userId": "u1", "title": "t", "content": "c"}, "token"},
		{"TokenEmpty", map[string]any{"token": "", "title": "t", "content": "c"}, "token"},
		{"TokenBlank", map[string]any{"token": "  ", "title": "t", "content": "c"}, "token"},
		{"TokenNumber", `{"token":123,"title":"t","content":"c"}`, "token"},
		{"TokenTooLong", map[string]any{"token": strings.Repeat("t", 4097), "title": "t", "content": "c"}, "token"},
		{"TokenNoTitle", map[string]any{"token": "test-push-token", "content": "c"}, "title"},
		{"NoTarget", map[string]any{"title": "t", "content": "c"}, "userId"},
		{"NoTitle", map[string]any{"userId": "u1", "content": "c"}, "title"},
		{"BlankContent", map[string]any{"userId": "u1", "title": "t", "content": " "}, "content"},
		{"Unknown", map[string]any{"userId": "u1", "title": "t", "content": "c", "titel": "x"}, "titel"},
		{"Fraction", `{"userId":1.5,"title":"t","content":"c"}`, "userId"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := testenv.WantError(t, e.adminDo("POST", path, c.body), path, herald.ErrInvalidRequest)
			if !slices.ContainsFunc(body.Details, func(d herald.Detail) bool { return d.Field == c.field }) {
				t.Errorf("details: got %+v, want %s named", body.Details, c.field)
			}
		})
	}

	if after := len(e.PushList(a)); after != before {
		t.Errorf("pushes after refused test pushes: got %d, want %d", after, before)
	}

	noFCM := e.NewAppWithoutFCM(nil)
	p2 := "/admin/v1/apps/" + noFCM.ID + "/test-push"
	testenv.WantError(t, e.adminDo("POST", p2, map[string]any{"userId": "u1", "title": "t", "content": "c"}), p2, herald.ErrNoFCM)
	e.PatchApp(a, map[string]any{"registered": false})
	testenv.WantError(t, e.adminDo("POST", path, map[string]any{"userId": "u1", "title": "t", "content": "c"}), path, herald.ErrAppNotFound)
	p3 := "/admin/v1/apps/app_missing/test-push"
	testenv.WantError(t, e.adminDo("POST", p3, map[string]any{"userId": "u1", "title": "t", "content": "c"}), p3, herald.ErrNotFound)
}

// testPushTo sends a test push through the admin API, wants 200, and
// returns the push once it is final.
func (e *env) testPushTo(a testenv.App, body map[string]any) testenv.PushView {
	e.T.Helper()
	path := "/admin/v1/apps/" + a.ID + "/test-push"
	res := e.adminDo("POST", path, body)
	if res.Status != http.StatusOK {
		e.T.Fatalf("test push %v: got %d %s, want 200", body, res.Status, res.Body)
	}
	var out struct{ PushID string }
	res.Decode(e.T, &out)
	return e.WaitFinal(out.PushID, 20*time.Second)
}

// TestTestPushToken: a test push to a token goes to the one device that
// holds it (mapped or not), not to its user's other devices, and is not
// charged; a token no device holds, or a user without a device, is refused
// 404 ERR-AB-VAL-02; an unregistered token reports its user unreachable and
// drops the device.
func TestTestPushToken(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true}) // to withdraw a user
	e.Device(a, "d1", "tp-one", "android", "1.6.0", "u1")
	e.Device(a, "d2", "tp-two", "ios", "1.6.0", "u1")
	e.Device(a, "d3", "tp-unmapped", "android", "1.6.0", nil)
	e.Device(a, "d4", "unregistered-tp", "android", "1.6.0", "u2")

	p := e.testPushTo(a, map[string]any{"token": "tp-one", "title": "To one token", "content": "Only this device"})
	if p.Status != "done" || p.Kind != "token" || p.Counts.Tokens != 1 || p.Counts.Sent != 1 || p.Counts.Unreachable != 0 ||
		p.Counts.RequestedUsers != 1 || p.ServerActions != 0 {
		t.Errorf("token push: got %+v, want a token push done with 1 token sent, 1 requested user, 0 Server Actions", p)
	}
	if got := e.SentTo(p.PushID); len(got) != 1 || got["tp-one"] != 1 {
		t.Errorf("sent: got %v, want tp-one once and u1's other device nothing", got)
	}
	if got := e.Received("tp-one"); len(got) != 1 || !strings.Contains(string(got[0].Message), "Only this device") {
		t.Errorf("emulator: got %d messages for tp-one, want the test push", len(got))
	}

	// An unmapped device's token works too.
	p = e.testPushTo(a, map[string]any{"token": "tp-unmapped", "title": "t", "content": "c"})
	if p.Status != "done" || p.Kind != "token" || p.Counts.Sent != 1 || p.Counts.Unreachable != 0 {
		t.Errorf("unmapped device's token: got %+v, want done with 1 sent", p)
	}
	if got := e.SentTo(p.PushID); len(got) != 1 || got["tp-unmapped"] != 1 {
		t.Errorf("unmapped device's token: sent %v, want tp-unmapped once", got)
	}

	// No device holds the token, or the user has none (never registered,
	// withdrawn, every device gone): 404 naming the member, nothing made.
	path := "/admin/v1/apps/" + a.ID + "/test-push"
	e.Device(a, "d5", "tp-gone", "android", "1.6.0", "u5")
	e.Device(a, "d6", "tp-withdrawn", "android", "1.6.0", "u6")
	e.Device(a, "d6b", "tp-withdrawn-2", "android", "1.6.0", "u6")
	if err := a.Client.DeletePushToken(context.Background(), "d5"); err != nil {
		t.Fatalf("delete u5's only device: %v", err)
	}
	if _, err := a.Client.DeleteUser(context.Background(), "u6"); err != nil {
		t.Fatalf("withdraw u6: %v", err)
	}
	before := len(e.PushList(a))
	for _, c := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"TokenNobodyHolds", map[string]any{"token": "tp-nobody", "title": "t", "content": "c"}, "token"},
		{"UserNeverRegistered", map[string]any{"userId": "u-never", "title": "t", "content": "c"}, "userId"},
		{"UserWithdrawn", map[string]any{"userId": "u6", "title": "t", "content": "c"}, "userId"},
		{"UserDevicesGone", map[string]any{"userId": "u5", "title": "t", "content": "c"}, "userId"},
		{"TokenOfRemovedDevice", map[string]any{"token": "tp-gone", "title": "t", "content": "c"}, "token"},
	} {
		body := testenv.WantError(t, e.adminDo("POST", path, c.body), path, herald.ErrNoDevice)
		if len(body.Details) != 1 || body.Details[0].Field != c.field || body.Message != "No device to send to." {
			t.Errorf("%s: got %+v, want 404 No device to send to. naming %s", c.name, body, c.field)
		}
	}
	if after := len(e.PushList(a)); after != before {
		t.Errorf("pushes after refused test pushes: got %d, want %d", after, before)
	}
	// FCM answers UNREGISTERED: the device's user is unreachable and the
	// token is dropped, as for any push.
	p = e.testPushTo(a, map[string]any{"token": "unregistered-tp", "title": "t", "content": "c"})
	if p.Status != "done" || p.Counts.Sent != 0 || p.Counts.Unreachable != 1 || len(p.UnreachableUsers) != 1 ||
		p.UnreachableUsers[0].UserID != "u2" || p.UnreachableUsers[0].Reason != herald.ReasonAppDeleted {
		t.Errorf("unregistered token: got %+v, want done with u2 unreachable (APP_DELETED)", p)
	}
	if u := e.UserView(a, "u2"); len(u.Devices) != 0 {
		t.Errorf("u2 after UNREGISTERED: got %d devices, want none", len(u.Devices))
	}

	if u := e.Usage(a); u != 0 {
		t.Errorf("usage after token test pushes: got %v Server Actions, want 0", u)
	}
	if got := e.Received("tp-two"); len(got) != 0 {
		t.Errorf("u1's other device: got %d messages, want none", len(got))
	}
}
