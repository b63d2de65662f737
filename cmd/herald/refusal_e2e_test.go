package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/fcmtest"
	"github.com/heraldpush/herald/internal/testenv"
)

// TestRefusalsNameTheSetting: on a server without the test settings, the
// emulator's service-account file and an http webhook are refused with
// the variable (and flag) that would accept them, and the CLI names the
// credentials file by its flag, --file, not the request's body.
func TestRefusalsNameTheSetting(t *testing.T) {
	t.Parallel()
	e := start(t, func(c *config) { c.FCMAllowAnyTokenURI, c.WebhookAllowPrivate = false, false })
	a := e.newAppWithoutFCM(nil)
	cli := func(args ...string) error {
		_, _, err := heraldCLI(t, nil, append(append([]string{"app"}, args...), "--server", e.svc.AdminURL, "--token", e.adminTok)...)
		return err
	}

	t.Run("TokenURI", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "sa.json")
		if err := os.WriteFile(file, fcmtest.ServiceAccountJSON(t, "proj", e.emuURL+"/token"), 0o600); err != nil {
			t.Fatal(err)
		}
		err := cli("credentials", a.ID, "--file", file)
		if err == nil || !strings.Contains(err.Error(), "HERALD_FCM_ALLOW_ANY_TOKEN_URI=true") ||
			!strings.Contains(err.Error(), "--fcm-allow-any-token-uri") {
			t.Errorf("emulator's file: got %v, want the refusal to name HERALD_FCM_ALLOW_ANY_TOKEN_URI", err)
		}
		if err == nil || !strings.Contains(err.Error(), "\n  --file: ") || strings.Contains(err.Error(), "body:") {
			t.Errorf("emulator's file: got %v, want the detail labelled --file, not body", err)
		}
	})
	t.Run("WebhookHTTP", func(t *testing.T) {
		err := cli("webhook", a.ID, "--url", "http://127.0.0.1:9/hook")
		if err == nil || !strings.Contains(err.Error(), "HERALD_WEBHOOK_ALLOW_PRIVATE=true") ||
			!strings.Contains(err.Error(), "--webhook-allow-private") {
			t.Errorf("http webhook: got %v, want the refusal to name HERALD_WEBHOOK_ALLOW_PRIVATE", err)
		}
	})
	t.Run("WebhookPublicHTTPSUnchanged", func(t *testing.T) {
		// a URL no setting would accept says nothing of one
		err := cli("webhook", a.ID, "--url", "ftp://example.com/hook")
		if err == nil || strings.Contains(err.Error(), "HERALD_WEBHOOK_ALLOW_PRIVATE") {
			t.Errorf("ftp webhook: got %v, want a refusal that does not name HERALD_WEBHOOK_ALLOW_PRIVATE", err)
		}
	})
}

// TestScheduleTimeRefusalsSayTheZone: a scheduleTime with an offset or Z
// is refused saying offsets are not accepted and the time is read in the
// app's zone; one past 366 days says the zone and its time now too.
func TestScheduleTimeRefusalsSayTheZone(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.newApp(map[string]any{"timeZone": "Asia/Seoul"})
	e.register(a, "sched-", "u1")
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
			res := e.serverDo(http.MethodPost, "/api/push/v2/users", a.keys(), body)
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
	a := e.newApp(nil)
	e.register(a, "now-", "u1")
	res, err := a.c.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "t", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	for _, call := range []struct {
		method, path string
		body         any
	}{{"POST", "/admin/v1/pushes/" + res.PushID + "/cancel", nil}, {"PATCH", "/admin/v1/pushes/" + res.PushID, map[string]any{"title": "t2"}}} {
		var got testenv.ErrorBody
		code := e.admin(call.method, call.path, call.body, &got)
		if code != http.StatusConflict || got.Code != herald.ErrScheduleLocked.Code || got.Message != herald.ErrScheduleLocked.Message {
			t.Errorf("%s %s: got %d %s %q, want 409 %s %q", call.method, call.path, code, got.Code, got.Message,
				herald.ErrScheduleLocked.Code, herald.ErrScheduleLocked.Message)
		}
		if len(got.Details) != 1 || got.Details[0].Field != "status" || !strings.Contains(got.Details[0].Reason, "this push was not scheduled, it was sent at once") {
			t.Errorf("%s %s: details %+v, want status saying the push was not scheduled but sent at once", call.method, call.path, got.Details)
		}
	}
}
