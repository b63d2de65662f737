package main

import (
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
	e.t.Helper()
	return testenv.Send(e.t, http.DefaultClient, e.svc.AdminURL, testenv.Request{Method: method, URL: path,
		Header: map[string]string{"Authorization": "Bearer " + e.adminTok}, Body: body})
}

// TestTestPush: POST /admin/v1/apps/{appId}/test-push sends one push to one
// user through the whole pipeline (FCM, history) and charges nothing.
func TestTestPush(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.newApp(nil)
	e.device(a, "d1", "test-push-token", "android", "1.6.0", "u1")
	path := "/admin/v1/apps/" + a.ID + "/test-push"

	var out struct{ PushID string }
	res := e.adminDo("POST", path, map[string]any{"userId": "u1", "title": "Test from the operator", "content": "Does it arrive?"})
	if res.Status != http.StatusOK {
		t.Fatalf("test push: got %d %s, want 200", res.Status, res.Body)
	}
	res.Decode(t, &out)
	p := e.waitFinal(out.PushID, 20*time.Second)
	if p.Status != "done" || p.Counts.Sent != 1 || p.ServerActions != 0 || p.Kind != "users" {
		t.Fatalf("test push: got %+v, want a users push done with 1 sent and 0 Server Actions", p)
	}
	got := e.received("test-push-token")
	if len(got) != 1 || !strings.Contains(string(got[0].Message), "Test from the operator") || !strings.Contains(string(got[0].Message), out.PushID) {
		t.Fatalf("emulator: got %d messages, want the test push", len(got))
	}
	if u := e.usage(a); u != 0 {
		t.Errorf("usage after a test push: got %v Server Actions, want 0", u)
	}
	// A number is the same user as its text, as on the Server API.
	e.device(a, "d2", "test-push-token-2", "android", "1.6.0", 42)
	if res := e.adminDo("POST", path, `{"userId":42,"title":"t","content":"c"}`); res.Status != http.StatusOK {
		t.Errorf("userId as a number: got %d %s, want 200", res.Status, res.Body)
	}

	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"Token", map[string]any{"token": "test-push-token", "title": "t", "content": "c"}, "token"},
		{"Both", map[string]any{"token": "x", "userId": "u1", "title": "t", "content": "c"}, "token"},
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
	body := testenv.WantError(t, e.adminDo("POST", path, map[string]any{"token": "test-push-token", "title": "t", "content": "c"}), path, herald.ErrInvalidRequest)
	if len(body.Details) != 1 || !strings.Contains(body.Details[0].Reason, "not supported yet") {
		t.Errorf("token: got %+v, want it refused as not supported yet", body.Details)
	}

	noFCM := e.newAppWithoutFCM(nil)
	p2 := "/admin/v1/apps/" + noFCM.ID + "/test-push"
	testenv.WantError(t, e.adminDo("POST", p2, map[string]any{"userId": "u1", "title": "t", "content": "c"}), p2, herald.ErrNoFCM)
	e.patchApp(a, map[string]any{"registered": false})
	testenv.WantError(t, e.adminDo("POST", path, map[string]any{"userId": "u1", "title": "t", "content": "c"}), path, herald.ErrAppNotFound)
	p3 := "/admin/v1/apps/app_missing/test-push"
	testenv.WantError(t, e.adminDo("POST", p3, map[string]any{"userId": "u1", "title": "t", "content": "c"}), p3, herald.ErrNotFound)
}
