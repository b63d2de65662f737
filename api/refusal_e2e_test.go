package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
)

// TestScheduleTimeRefusalsSayTheZone: a scheduleTime with an offset or Z
// is refused saying offsets are not accepted and the time is read in the
// app's zone; one past 366 days says the zone and its time now too.
func TestScheduleTimeRefusalsSayTheZone(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(map[string]any{"timeZone": "Asia/Seoul"})
	e.Register(a, "sched-", "u1")
	next := time.Now().Add(48 * time.Hour).In(time.UTC).Format("2006-01-02T15:04")
	far := time.Now().Add(400 * 24 * time.Hour).Format("2006-01-02T15:04")
	for _, tt := range []struct{ name, at, want string }{
		{"Z", next + "Z", "offsets and Z are not accepted; the time is read in the app's time zone (Asia/Seoul)"},
		{"Offset", next + ":00+09:00", "offsets and Z are not accepted; the time is read in the app's time zone (Asia/Seoul)"},
		{"Seconds", next + ":00", "(no seconds, no offset), a time read in the app's time zone (Asia/Seoul)"},
		{"BeyondHorizon", far, "must be at most 366 days ahead: it is read in the app's time zone, Asia/Seoul, where it is now "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := map[string]any{"userIds": []string{"u1"}, "title": "t", "content": "c", "options": map[string]any{"scheduleTime": tt.at}}
			res := e.ServerDo(http.MethodPost, "/api/push/v2/users", a.Keys(), body)
			var got testenv.ErrorBody
			res.Decode(t, &got)
			if res.Status != http.StatusBadRequest || len(got.Details) != 1 || got.Details[0].Field != "options.scheduleTime" ||
				!strings.Contains(got.Details[0].Reason, tt.want) {
				t.Errorf("scheduleTime %q: got %d %s, want 400 with options.scheduleTime's reason saying %q", tt.at, res.Status, res.Body, tt.want)
			}
		})
	}
}

// TestCancelImmediatePushSaysNotScheduled: cancelling (or editing) a push
// sent at once keeps 409 ERR-AB-SCH-01 and its message, and says in
// details that the push was not scheduled but sent at once.
func TestCancelImmediatePushSaysNotScheduled(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "now-", "u1")
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "t", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	for _, call := range []struct {
		method, path string
		body         any
	}{{"POST", "/admin/v1/pushes/" + res.PushID + "/cancel", nil}, {"PATCH", "/admin/v1/pushes/" + res.PushID, map[string]any{"title": "t2"}}} {
		var got testenv.ErrorBody
		code := e.AdminJSON(call.method, call.path, call.body, &got)
		if code != http.StatusConflict || got.Code != herald.ErrScheduleLocked.Code || got.Message != herald.ErrScheduleLocked.Message {
			t.Errorf("%s %s: got %d %s %q, want 409 %s %q", call.method, call.path, code, got.Code, got.Message,
				herald.ErrScheduleLocked.Code, herald.ErrScheduleLocked.Message)
		}
		if len(got.Details) != 1 || got.Details[0].Field != "status" || !strings.Contains(got.Details[0].Reason, "this push was not scheduled, it was sent at once") {
			t.Errorf("%s %s: details %+v, want status saying the push was not scheduled but sent at once", call.method, call.path, got.Details)
		}
	}
}
