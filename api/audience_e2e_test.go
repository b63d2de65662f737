package api_test

import (
	"net/http"
	"testing"

	"github.com/heraldpush/herald/internal/testenv"
)

// TestRegisterLocale: a registration's locale and time zone are kept on
// the device and shown in the admin view; one that omits them (or sends
// null) keeps what was reported; a bad one is refused naming it and
// changes nothing.
func TestRegisterLocale(t *testing.T) {
	e := start(t)
	a := e.NewApp(nil)
	register := func(extra map[string]any) (int, string) {
		body := map[string]any{"deviceId": "d1", "token": "tok-1", "platform": "ios", "appSourceVersion": "1.6.0", "userId": "u1"}
		for k, v := range extra {
			body[k] = v
		}
		res := e.SDK(t, a, http.MethodPost, "/api/sdk/v2/push-token", body)
		return res.Status, string(res.Body)
	}
	device := func() (string, string) {
		t.Helper()
		u := e.UserView(a, "u1")
		if len(u.Devices) != 1 {
			t.Fatalf("devices: got %+v, want d1", u.Devices)
		}
		return u.Devices[0].Locale, u.Devices[0].TimeZone
	}
	if code, body := register(map[string]any{"locale": "ko-KR", "timeZone": "Asia/Seoul"}); code != http.StatusOK {
		t.Fatalf("register: got %d %s", code, body)
	}
	if l, z := device(); l != "ko-KR" || z != "Asia/Seoul" {
		t.Errorf("after register: got %q %q, want ko-KR Asia/Seoul", l, z)
	}
	if code, body := register(map[string]any{"locale": nil}); code != http.StatusOK {
		t.Fatalf("register again: got %d %s", code, body)
	}
	if l, z := device(); l != "ko-KR" || z != "Asia/Seoul" {
		t.Errorf("omitted and null: got %q %q, want them kept", l, z)
	}
	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"locale": "not a tag"}, "locale"},
		{map[string]any{"locale": "ko-KR-abcdefghijklmnopqrstuvwxyz-abcdefgh"}, "locale"},
		{map[string]any{"locale": ""}, "locale"},
		{map[string]any{"locale": 7}, "locale"},
		{map[string]any{"timeZone": "Mars/Olympus"}, "timeZone"},
		{map[string]any{"timeZone": "Local"}, "timeZone"},
	} {
		res := e.SDK(t, a, http.MethodPost, "/api/sdk/v2/push-token", merge(map[string]any{"deviceId": "d1", "token": "tok-2", "platform": "ios", "appSourceVersion": "1.6.0"}, tc.body))
		if res.Status != http.StatusBadRequest || !namesField(t, res, tc.field) {
			t.Errorf("%v: got %d %s, want 400 naming %s", tc.body, res.Status, res.Body, tc.field)
		}
	}
	if l, z := device(); l != "ko-KR" || z != "Asia/Seoul" {
		t.Errorf("after refusals: got %q %q, want unchanged", l, z)
	}
	if u := e.UserView(a, "u1"); u.Devices[0].TokenSuffix != "tok-1" {
		t.Errorf("token: got %q, want tok-1 (refusals change nothing)", u.Devices[0].TokenSuffix)
	}
}

// merge returns a's members with b's over them.
func merge(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// namesField reports whether an error answer's details name field alone.
func namesField(t *testing.T, res testenv.Response, field string) bool {
	t.Helper()
	var body testenv.ErrorBody
	res.Decode(t, &body)
	return len(body.Details) == 1 && body.Details[0].Field == field
}
