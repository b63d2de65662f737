package api_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/request"
)

// End-to-end tests of the input contract (DESIGN.md section 4, item 8):
// unknown members, invalid text and the app-user tier rule, through the
// real listeners, SQLite and the FCM emulator.

// wantInvalid checks a 400 ERR-AB-VAL-00 at path whose details hold want.
func wantInvalid(t *testing.T, res testenv.Response, path string, want herald.Detail) {
	t.Helper()
	got := testenv.WantError(t, res, path, herald.ErrInvalidRequest)
	for _, d := range got.Details {
		if d == want {
			return
		}
	}
	t.Errorf("%s: details %+v, want %+v", path, got.Details, want)
}

// onlySentinel sends a push to user and waits for it to finish, then checks
// the emulator received nothing but that push: every refused request before
// it sent nothing, without waiting for nothing to happen.
func (e *env) onlySentinel(a testenv.App, user string) {
	e.T.Helper()
	res := e.ServerDo(http.MethodPost, usersPath, a.Keys(), map[string]any{"userIds": []string{user}, "title": "sentinel", "content": "c"})
	if res.Status != http.StatusOK {
		e.T.Fatalf("sentinel push: got %d %s, want 200", res.Status, res.Body)
	}
	id := res.Header.Get("X-Push-Id")
	if p := e.WaitFinal(id, 30*time.Second); p.Status != "done" || p.Counts.Sent != 1 {
		e.T.Fatalf("sentinel push: got %s with %d sent, want done with 1", p.Status, p.Counts.Sent)
	}
	for _, m := range e.Emulator.Messages("") {
		if !bytes.Contains(m.Message, []byte(id)) {
			e.T.Errorf("emulator got %s, want only the sentinel push %s", m.Message, id)
		}
	}
	if pushes := e.PushList(a); len(pushes) != 1 || pushes[0].PushID != id {
		e.T.Errorf("push history: got %+v, want only the sentinel", pushes)
	}
}

func TestUnknownMembersRefusedEndToEnd(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true})
	e.Device(a, "dev-1", "tok-u1", "android", "1.6.0", "u1")
	later := time.Now().In(testenv.Seoul).Add(2 * time.Hour).Format("2006-01-02T15:04")

	t.Run("OptionTypoSendsNothing", func(t *testing.T) {
		body := fmt.Sprintf(`{"userIds":["u1"],"title":"Sale","content":"c","option":{"scheduleTime":%q}}`, later)
		wantInvalid(t, e.ServerDo(http.MethodPost, usersPath, a.Keys(), body), usersPath, herald.Detail{Field: "option", Reason: "unknown field"})
		body = fmt.Sprintf(`{"userIds":["u1"],"title":"Sale","content":"c","options":{"scheduletime":%q}}`, later)
		wantInvalid(t, e.ServerDo(http.MethodPost, usersPath, a.Keys(), body), usersPath, herald.Detail{Field: "options.scheduletime", Reason: "unknown field"})
	})
	t.Run("DuplicateMemberRefused", func(t *testing.T) {
		// Go would keep the last "options" silently: an immediate push.
		body := fmt.Sprintf(`{"userIds":["u1"],"title":"Sale","content":"c","options":{"scheduleTime":%q},"options":null}`, later)
		wantInvalid(t, e.ServerDo(http.MethodPost, usersPath, a.Keys(), body), usersPath,
			herald.Detail{Field: "options", Reason: request.ReasonDuplicateMember})
	})
	t.Run("MessagesElement", func(t *testing.T) {
		body := `{"messages":[{"userId":"u1","title":"t","content":"c"},{"userId":"u1","titel":"t","title":"t","content":"c"}]}`
		wantInvalid(t, e.ServerDo(http.MethodPost, messagesPath, a.Keys(), body), messagesPath, herald.Detail{Field: "messages[1].titel", Reason: "unknown field"})
	})
	t.Run("AllUsersWithUserIds", func(t *testing.T) {
		const path = "/api/push/v2/all"
		body := `{"userIds":["u1"],"title":"t","content":"c"}`
		wantInvalid(t, e.ServerDo(http.MethodPost, path, a.Keys(), body), path, herald.Detail{Field: "userIds", Reason: "unknown field"})
	})
	t.Run("PatchMarketing", func(t *testing.T) {
		const path = "/api/app-user/v2/marketing"
		body := `{"userId":"u1","state":{"marketing":true,"sms":true}}`
		wantInvalid(t, e.ServerDo(http.MethodPatch, path, a.Keys(), body), path, herald.Detail{Field: "state.sms", Reason: "unknown field"})
		if u := e.UserView(a, "u1"); u.Marketing || u.Devices[0].Marketing {
			t.Errorf("consent after refused PATCH: got %+v, want unchanged (off)", u)
		}
	})
	t.Run("AdminCreateApp", func(t *testing.T) {
		var before, after struct{ Apps []struct{ AppID string } }
		e.AdminJSON(http.MethodGet, "/admin/v1/apps", nil, &before)
		var res testenv.ErrorBody
		if code := e.AdminJSON(http.MethodPost, "/admin/v1/apps", []byte(`{"name":"x","tier":"business","appUserEnabeld":true}`), &res); code != http.StatusBadRequest ||
			len(res.Details) != 1 || res.Details[0] != (herald.Detail{Field: "appUserEnabeld", Reason: "unknown field"}) {
			t.Errorf("create: got %d %+v, want 400 naming appUserEnabeld", code, res)
		}
		e.AdminJSON(http.MethodGet, "/admin/v1/apps", nil, &after)
		if len(after.Apps) != len(before.Apps) {
			t.Errorf("apps: got %d, want %d (nothing created)", len(after.Apps), len(before.Apps))
		}
	})
	t.Run("SDKIgnoresUnknown", func(t *testing.T) {
		res := e.ServerDo(http.MethodPost, "/api/sdk/v2/push-token", map[string]string{"x-api-key": a.APIKey},
			`{"deviceId":"dev-2","token":"tok-u2","platform":"ios","appSourceVersion":"1.6.0","userId":"u2","sdkVersion":"3.1.0","screen":{"w":390}}`)
		if res.Status != http.StatusOK {
			t.Fatalf("SDK register with unknown members: got %d %s, want 200", res.Status, res.Body)
		}
		if u := e.UserView(a, "u2"); len(u.Devices) != 1 || u.Devices[0].DeviceID != "dev-2" {
			t.Errorf("u2: got %+v, want dev-2", u)
		}
	})
	if got := e.Usage(a); got != 0 {
		t.Errorf("usage after refused pushes: got %v, want 0", got)
	}
	e.onlySentinel(a, "u1")
}

func TestInvalidTextRefusedEndToEnd(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true})
	e.Device(a, "dev-1", "tok-u1", "android", "1.6.0", "u1")
	tests := []struct {
		name, body string
		want       herald.Detail
	}{
		{"UserIDInvalidByte", "{\"userIds\":[\"u1\",\"u\xff1\"],\"title\":\"t\",\"content\":\"c\"}", herald.Detail{Field: "userIds[1]", Reason: herald.ReasonInvalidUTF8}},
		{"UserIDLoneSurrogate", `{"userIds":["\ud800"],"title":"t","content":"c"}`, herald.Detail{Field: "userIds[0]", Reason: request.ReasonLoneSurrogate}},
		{"TitleInvalidByte", "{\"userIds\":[\"u1\"],\"title\":\"Sale \xe2\x82\",\"content\":\"c\"}", herald.Detail{Field: "title", Reason: herald.ReasonInvalidUTF8}},
		{"TitleLoneSurrogate", `{"userIds":["u1"],"title":"Sale \udc00","content":"c"}`, herald.Detail{Field: "title", Reason: request.ReasonLoneSurrogate}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantInvalid(t, e.ServerDo(http.MethodPost, usersPath, a.Keys(), tt.body), usersPath, tt.want)
		})
	}
	t.Run("UserIDsDifferingByInvalidBytesStayApart", func(t *testing.T) {
		const path = "/api/sdk/v2/push-token"
		sdk := map[string]string{"x-api-key": a.APIKey}
		for i, id := range []struct{ text, reason string }{
			{"bob\xff", herald.ReasonInvalidUTF8}, {"bob\xfe", herald.ReasonInvalidUTF8},
			{`bob\ud800`, request.ReasonLoneSurrogate}, {`bob\udfff`, request.ReasonLoneSurrogate},
		} {
			body := fmt.Sprintf(`{"deviceId":"dev-bob-%d","token":"tok-bob-%d","platform":"ios","appSourceVersion":"1.6.0","userId":"%s"}`, i, i, id.text)
			wantInvalid(t, e.ServerDo(http.MethodPost, path, sdk, body), path, herald.Detail{Field: "userId", Reason: id.reason})
		}
		if code := e.AdminJSON(http.MethodGet, "/admin/v1/apps/"+a.ID+"/users/"+url.PathEscape("bob\uFFFD"), nil, nil); code != http.StatusNotFound {
			t.Errorf("user bob\\uFFFD: got %d, want 404 (never made)", code)
		}
	})
	if got := e.Usage(a); got != 0 {
		t.Errorf("usage after refused pushes: got %v, want 0", got)
	}
	e.onlySentinel(a, "u1")
	if msgs := e.Received("tok-u1"); len(msgs) != 1 || bytes.Contains(msgs[0].Message, []byte("\uFFFD")) {
		t.Errorf("messages to u1: got %d, want only the sentinel without U+FFFD", len(msgs))
	}
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
