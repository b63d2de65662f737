package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
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

// tagsOf reads a tag answer's tags.
func tagsOf(t *testing.T, res testenv.Response) map[string]any {
	t.Helper()
	var out struct {
		Tags map[string]any `json:"tags"`
	}
	res.Decode(t, &out)
	return out.Tags
}

// TestTags: the Server API's tag update sets strings, numbers and
// booleans, null deletes, members not named are kept; the SDK's sets the
// tags of the device's user; the admin view and export show them; each
// refusal answers its code and changes nothing; withdrawal deletes them.
func TestTags(t *testing.T) {
	e := start(t)
	a := e.BusinessApp(t)
	e.RegisterToken(t, a, "d1", "tok-1", "u1")
	e.RegisterToken(t, a, "d-anon", "tok-anon", nil)
	put := func(userID any, tags any) testenv.Response {
		return e.Server(t, a, http.MethodPut, "/api/app-user/v2/tags", map[string]any{"userId": userID, "tags": tags})
	}
	res := put("u1", map[string]any{"plan": "gold", "visits": 12.5, "vip": true, "city": "Seoul"})
	if res.Status != http.StatusOK {
		t.Fatalf("put: got %d %s", res.Status, res.Body)
	}
	want := map[string]any{"plan": "gold", "visits": 12.5, "vip": true, "city": "Seoul"}
	if got := tagsOf(t, res); !sameJSON(got, want) {
		t.Errorf("put: got %v, want %v", got, want)
	}
	res = put("u1", map[string]any{"city": nil, "visits": 13})
	want = map[string]any{"plan": "gold", "visits": 13.0, "vip": true}
	if got := tagsOf(t, res); res.Status != http.StatusOK || !sameJSON(got, want) {
		t.Errorf("update: got %d %v, want %v", res.Status, got, want)
	}
	res = e.SDK(t, a, http.MethodPatch, "/api/sdk/v2/tags", map[string]any{"deviceId": "d1", "tags": map[string]any{"lang": "ko"}})
	want["lang"] = "ko"
	if got := tagsOf(t, res); res.Status != http.StatusOK || !sameJSON(got, want) {
		t.Errorf("sdk: got %d %s, want %v", res.Status, res.Body, want)
	}
	viewTags := func() map[string]any {
		var view struct {
			Tags map[string]any `json:"tags"`
		}
		e.AdminJSON(http.MethodGet, "/admin/v1/apps/"+a.ID+"/users/u1", nil, &view)
		return view.Tags
	}
	if got := viewTags(); !sameJSON(got, want) {
		t.Errorf("admin view: got %v, want %v", got, want)
	}
	var export struct {
		Tags map[string]any `json:"tags"`
	}
	if e.AdminJSON(http.MethodGet, "/admin/v1/apps/"+a.ID+"/users/u1/export?reason=test", nil, &export); !sameJSON(export.Tags, want) {
		t.Errorf("export: got %v, want %v", export.Tags, want)
	}
	var adminPut struct {
		Tags map[string]any `json:"tags"`
	}
	code := e.AdminJSON(http.MethodPut, "/admin/v1/apps/"+a.ID+"/users/u1/tags", map[string]any{"tags": map[string]any{"lang": nil}}, &adminPut)
	delete(want, "lang")
	if code != http.StatusOK || !sameJSON(adminPut.Tags, want) {
		t.Errorf("admin put: got %d %v, want %v", code, adminPut.Tags, want)
	}

	long := strings.Repeat("가", 256)
	for _, tc := range []struct {
		name       string
		res        func() testenv.Response
		status     int
		code, path string
	}{
		{"BadName", func() testenv.Response { return put("u1", map[string]any{"bad name": 1}) }, 400, "ERR-AB-VAL-00", "tags.bad name"},
		{"LongValue", func() testenv.Response { return put("u1", map[string]any{"plan": long}) }, 400, "ERR-AB-VAL-00", "tags.plan"},
		{"Object", func() testenv.Response { return put("u1", map[string]any{"plan": map[string]any{}}) }, 400, "ERR-AB-VAL-00", "tags.plan"},
		{"NotObject", func() testenv.Response { return put("u1", []any{"plan"}) }, 400, "ERR-AB-VAL-00", "tags"},
		{"Missing", func() testenv.Response {
			return e.Server(t, a, http.MethodPut, "/api/app-user/v2/tags", map[string]any{"userId": "u1"})
		}, 400, "ERR-AB-VAL-00", "tags"},
		{"NoUser", func() testenv.Response { return put("nobody", map[string]any{"plan": "x"}) }, 404, "ERR-AB-ACS-43", ""},
		{"Unmapped", func() testenv.Response {
			return e.SDK(t, a, http.MethodPatch, "/api/sdk/v2/tags", map[string]any{"deviceId": "d-anon", "tags": map[string]any{"plan": "x"}})
		}, 409, "ERR-AB-ACS-44", ""},
		{"UnknownDevice", func() testenv.Response {
			return e.SDK(t, a, http.MethodPatch, "/api/sdk/v2/tags", map[string]any{"deviceId": "d-none", "tags": map[string]any{"plan": "x"}})
		}, 404, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.res()
			var body testenv.ErrorBody
			res.Decode(t, &body)
			if res.Status != tc.status || tc.code != "" && body.Code != tc.code || tc.path != "" && (len(body.Details) == 0 || body.Details[0].Field != tc.path) {
				t.Errorf("got %d %s, want %d %s naming %q", res.Status, res.Body, tc.status, tc.code, tc.path)
			}
		})
	}
	if got := viewTags(); !sameJSON(got, want) {
		t.Errorf("after refusals: got %v, want %v", got, want)
	}

	off := e.CreateApp(t, map[string]any{"tier": "business", "appUserEnabled": false})
	if res := e.Server(t, off, http.MethodPut, "/api/app-user/v2/tags", map[string]any{"userId": "u1", "tags": map[string]any{}}); res.Status != http.StatusForbidden || !bytes.Contains(res.Body, []byte("ERR-AB-ACS-41")) {
		t.Errorf("app users off: got %d %s, want 403 ERR-AB-ACS-41", res.Status, res.Body)
	}

	if res := e.Withdraw(t, a, "u1"); res.Status != http.StatusOK {
		t.Fatalf("withdraw: got %d %s", res.Status, res.Body)
	}
	if res := put("u1", map[string]any{"plan": "x"}); res.Status != http.StatusGone || !bytes.Contains(res.Body, []byte("ERR-AB-ACS-42")) {
		t.Errorf("withdrawn: got %d %s, want 410 ERR-AB-ACS-42", res.Status, res.Body)
	}
	var n int
	if err := e.QueryRow(`SELECT count(*) FROM user_tags WHERE app_id = ?`, a.ID).Scan(&n); err != nil || n != 0 {
		t.Errorf("tags after withdrawal: %d rows (%v), want none", n, err)
	}
	e.RegisterToken(t, a, "d1", "tok-1", "u1") // registered again: no tags of before
	if got := viewTags(); got == nil || len(got) != 0 {
		t.Errorf("registered again: got %v, want no tags ({})", got)
	}
}

// TestTagsLimitBurst: updates of one user made at once, each adding 30
// new tags, are judged one after the other by the database: exactly three
// fit under the limit of 100, and the others are refused whole.
func TestTagsLimitBurst(t *testing.T) {
	e := start(t)
	a := e.BusinessApp(t)
	e.RegisterToken(t, a, "d1", "tok-1", "u1")
	const updates, each = 8, 30
	codes := make([]int, updates)
	var wg sync.WaitGroup
	for i := range updates {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tags := map[string]any{}
			for j := range each {
				tags[fmt.Sprintf("t%d_%d", i, j)] = j
			}
			codes[i] = e.Server(t, a, http.MethodPut, "/api/app-user/v2/tags", map[string]any{"userId": "u1", "tags": tags}).Status
		}()
	}
	wg.Wait()
	ok := 0
	for _, c := range codes {
		switch c {
		case http.StatusOK:
			ok++
		case http.StatusBadRequest:
		default:
			t.Errorf("update: got %d, want 200 or 400", c)
		}
	}
	var n, prefixes int
	if err := e.QueryRow(`SELECT count(*), count(DISTINCT substr(name, 1, 3)) FROM user_tags WHERE app_id = ? AND user_id = 'u1'`, a.ID).Scan(&n, &prefixes); err != nil {
		t.Fatal(err)
	}
	if ok != 100/each || n != ok*each || prefixes != ok {
		t.Errorf("got %d accepted, %d tags of %d updates; want %d accepted and every tag of each", ok, n, prefixes, 100/each)
	}
}

// sameJSON reports whether a and b encode alike.
func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
