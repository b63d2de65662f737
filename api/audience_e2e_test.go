package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/audience"
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

// TestSegmentLimitBurst: segments created at once when the app has room
// for a few more are judged one after the other under the app's row lock:
// exactly as many as fit are created, the others refused 409
// ERR-AB-SEG-02, and the app ends with audience.MaxSegments.
func TestSegmentLimitBurst(t *testing.T) {
	e := start(t)
	a := e.BusinessApp(t)
	const room, burst = 5, 12
	filter := map[string]any{"tag": "plan", "eq": "gold"}
	for i := range audience.MaxSegments - room {
		if code := e.AdminJSON(http.MethodPost, "/admin/v1/apps/"+a.ID+"/segments", map[string]any{"name": fmt.Sprintf("s%d", i), "filter": filter}, nil); code != http.StatusCreated {
			t.Fatalf("segment %d: got %d, want 201", i, code)
		}
	}
	codes := make([]int, burst)
	errs := make([]struct{ Code string }, burst)
	var wg sync.WaitGroup
	for i := range burst {
		wg.Go(func() {
			codes[i] = e.AdminJSON(http.MethodPost, "/admin/v1/apps/"+a.ID+"/segments", map[string]any{"name": fmt.Sprintf("late%d", i), "filter": filter}, &errs[i])
		})
	}
	wg.Wait()
	created := 0
	for i, c := range codes {
		switch {
		case c == http.StatusCreated:
			created++
		case c != http.StatusConflict || errs[i].Code != "ERR-AB-SEG-02":
			t.Errorf("segment late%d: got %d %s, want 201 or 409 ERR-AB-SEG-02", i, c, errs[i].Code)
		}
	}
	var n int
	if err := e.QueryRow(`SELECT count(*) FROM segments WHERE app_id = ?`, a.ID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if created != room || n != audience.MaxSegments {
		t.Errorf("got %d created and %d kept, want %d and %d", created, n, room, audience.MaxSegments)
	}
}

// sameJSON reports whether a and b encode alike.
func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestSegmentPush: a push to a filter reaches the devices whose (user,
// device) pair the filter holds for, judged when it fans out, each user
// charged once; a saved segment's count agrees with what its push sent;
// a push by segmentId keeps the filter it was accepted with; a bad
// filter or unknown segment is refused naming it, accepting nothing.
func TestSegmentPush(t *testing.T) {
	e := start(t)
	a := e.BusinessApp(t)
	e.PutCredentials(a, "proj-seg")
	reg := func(device, token, platform string, user any, locale string) {
		body := map[string]any{"deviceId": device, "token": token, "platform": platform, "appSourceVersion": "1.6.0", "locale": locale}
		if user != nil {
			body["userId"] = user
		}
		if res := e.SDK(t, a, http.MethodPost, "/api/sdk/v2/push-token", body); res.Status != http.StatusOK {
			t.Fatalf("register %s: %d %s", device, res.Status, res.Body)
		}
	}
	reg("d-ann-1", "tok-ann-1", "android", "ann", "ko-KR")
	reg("d-ann-2", "tok-ann-2", "ios", "ann", "en-US")
	reg("d-bo", "tok-bo", "android", "bo", "ko-KR")
	reg("d-cy", "tok-cy", "android", "cy", "ja-JP")
	reg("d-anon", "tok-anon", "android", nil, "ko-KR")
	for user, tags := range map[string]map[string]any{"ann": {"plan": "gold"}, "bo": {"plan": "gold-trial"}, "cy": {"plan": "silver"}} {
		if res := e.Server(t, a, http.MethodPut, "/api/app-user/v2/tags", map[string]any{"userId": user, "tags": tags}); res.Status != http.StatusOK {
			t.Fatalf("tags of %s: %d %s", user, res.Status, res.Body)
		}
	}
	// Gold plans (ann, bo) on Korean-speaking android devices: d-ann-1
	// and d-bo; not ann's iPhone, not cy, not the anonymous device
	// (no user, no tags).
	filter := map[string]any{"and": []any{
		map[string]any{"tag": "plan", "prefix": "gold"},
		map[string]any{"field": "platform", "eq": "android"},
		map[string]any{"field": "locale", "prefix": "ko"},
	}}
	var count struct{ Users, Devices int }
	if code := e.AdminJSON(http.MethodPost, "/admin/v1/apps/"+a.ID+"/audience/count", map[string]any{"filter": filter}, &count); code != http.StatusOK || count.Users != 2 || count.Devices != 2 {
		t.Errorf("count: got %d %+v, want 2 users, 2 devices", code, count)
	}
	before := e.Usage(a)
	res := e.Server(t, a, http.MethodPost, "/api/push/v2/segments", map[string]any{"filter": filter, "title": "Gold news", "content": "For you"})
	if res.Status != http.StatusOK {
		t.Fatalf("push: %d %s", res.Status, res.Body)
	}
	id := res.Header.Get("X-Push-Id")
	p := e.WaitFinal(id, 10*time.Second)
	if got := e.SentTo(id); len(got) != 2 || got["tok-ann-1"] != 1 || got["tok-bo"] != 1 {
		t.Errorf("sent: got %v, want tok-ann-1 and tok-bo once each", got)
	}
	if p.Kind != "segment" || p.Counts.RequestedUsers != 2 || p.Counts.Sent != 2 {
		t.Errorf("push: got %+v, want a segment push to 2 users, 2 sent", p)
	}
	if got := e.Usage(a) - before; got != 1 {
		t.Errorf("charge: got %v Server Actions, want 1 (0.5 a user)", got)
	}
	var shown struct {
		Filter    map[string]any
		SegmentID *string
	}
	e.AdminJSON(http.MethodGet, "/admin/v1/pushes/"+id, nil, &shown)
	if shown.Filter == nil || shown.SegmentID != nil {
		t.Errorf("push JSON: got filter %v segment %v, want the filter and no segment", shown.Filter, shown.SegmentID)
	}

	// A saved segment: its count, and a scheduled push by its id that keeps
	// the filter it was accepted with when the segment changes after.
	var sg struct{ SegmentID string }
	if code := e.AdminJSON(http.MethodPost, "/admin/v1/apps/"+a.ID+"/segments", map[string]any{"name": "silver", "filter": map[string]any{"tag": "plan", "eq": "silver"}}, &sg); code != http.StatusCreated {
		t.Fatalf("create segment: %d", code)
	}
	if code := e.AdminJSON(http.MethodGet, "/admin/v1/apps/"+a.ID+"/segments/"+sg.SegmentID+"/count", nil, &count); code != http.StatusOK || count.Users != 1 || count.Devices != 1 {
		t.Errorf("segment count: got %d %+v, want cy's one device", code, count)
	}
	res = e.Server(t, a, http.MethodPost, "/api/push/v2/segments", map[string]any{"segmentId": sg.SegmentID, "title": "Silver", "content": "Hi"})
	if res.Status != http.StatusOK {
		t.Fatalf("push by segment: %d %s", res.Status, res.Body)
	}
	byID := res.Header.Get("X-Push-Id")
	if code := e.AdminJSON(http.MethodPut, "/admin/v1/apps/"+a.ID+"/segments/"+sg.SegmentID, map[string]any{"name": "silver", "filter": map[string]any{"tag": "plan", "eq": "gold"}}, nil); code != http.StatusOK {
		t.Errorf("put segment: %d", code)
	}
	e.WaitFinal(byID, 10*time.Second)
	if got := e.SentTo(byID); len(got) != 1 || got["tok-cy"] != 1 {
		t.Errorf("push by segment: sent %v, want tok-cy once", got)
	}
	e.AdminJSON(http.MethodGet, "/admin/v1/pushes/"+byID, nil, &shown)
	if shown.SegmentID == nil || *shown.SegmentID != sg.SegmentID {
		t.Errorf("push JSON: got segment %v, want %s", shown.SegmentID, sg.SegmentID)
	}

	pushes := len(e.PushList(a))
	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"title": "t", "content": "c"}, "filter"},
		{map[string]any{"filter": map[string]any{"and": []any{map[string]any{"tag": "plan", "gt": true}}}, "title": "t", "content": "c"}, "filter.and[0].gt"},
		{map[string]any{"filter": filter, "segmentId": sg.SegmentID, "title": "t", "content": "c"}, "segmentId"},
		{map[string]any{"segmentId": "seg_nope", "title": "t", "content": "c"}, "segmentId"},
	} {
		res := e.Server(t, a, http.MethodPost, "/api/push/v2/segments", tc.body)
		if res.Status != http.StatusBadRequest || !namesField(t, res, tc.field) {
			t.Errorf("%v: got %d %s, want 400 naming %s", tc.body, res.Status, res.Body, tc.field)
		}
	}
	if got := len(e.PushList(a)); got != pushes {
		t.Errorf("pushes after refusals: got %d, want %d", got, pushes)
	}
}

// shown reads the title and body the emulator got for token's last
// message of a push.
func shown(t *testing.T, e *env, token, pushID string) (title, body string, ok bool) {
	t.Helper()
	for _, m := range e.Received(token) {
		var msg struct {
			Notification struct{ Title, Body string }
			Data         map[string]string
		}
		if err := json.Unmarshal(m.Message, &msg); err != nil {
			t.Fatal(err)
		}
		if msg.Data["pushId"] == pushID {
			title, body, ok = msg.Notification.Title, msg.Notification.Body, true
		}
	}
	return title, body, ok
}

// TestTemplatesAndLanguages: each device gets its locale's entry (exact,
// then its language, else the default), with {{userId}} and tags filled
// for its user and defaults for tags missing; a marketing push's footer
// follows every entry; a message that its tags grow past FCM's limit
// fails alone (PAYLOAD_TOO_LARGE); bad templates, entries and an entry
// without the (광고) prefix are refused naming them.
func TestTemplatesAndLanguages(t *testing.T) {
	e := start(t)
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true})
	reg := func(device, user, locale string) {
		body := map[string]any{"deviceId": device, "token": "tok-" + device, "platform": "android", "appSourceVersion": "1.6.0", "userId": user}
		if locale != "" {
			body["locale"] = locale
		}
		if res := e.SDK(t, a, http.MethodPost, "/api/sdk/v2/push-token", body); res.Status != http.StatusOK {
			t.Fatalf("register %s: %d %s", device, res.Status, res.Body)
		}
	}
	reg("ann", "u-ann", "ko-KR")
	reg("bo", "u-bo", "en-GB")
	reg("cy", "u-cy", "ja-JP")
	reg("di", "u-di", "")
	e.Server(t, a, http.MethodPut, "/api/app-user/v2/tags", map[string]any{"userId": "u-ann", "tags": map[string]any{"name": "Ann", "points": 1200}})
	e.Server(t, a, http.MethodPut, "/api/app-user/v2/tags", map[string]any{"userId": "u-bo", "tags": map[string]any{"name": "Bo", "points": 7.5}})
	push := map[string]any{"userIds": []any{"u-ann", "u-bo", "u-cy", "u-di"},
		"title": "Hello {{tag.name | \"friend\"}}", "content": "{{userId}} has {{tag.points | \"no\"}} points",
		"localized": map[string]any{
			"ko":    map[string]any{"title": "{{tag.name | \"고객\"}}님 안녕하세요", "content": "포인트 {{tag.points}}"},
			"en-GB": map[string]any{"title": "Hiya {{tag.name}}", "content": "{{tag.points}} points, {{userId}}"},
		}}
	res := e.Server(t, a, http.MethodPost, "/api/push/v2/users", push)
	if res.Status != http.StatusOK {
		t.Fatalf("push: %d %s", res.Status, res.Body)
	}
	id := res.Header.Get("X-Push-Id")
	e.WaitFinal(id, 10*time.Second)
	for device, want := range map[string][2]string{
		"ann": {"Ann님 안녕하세요", "포인트 1200"},      // ko-KR → ko
		"bo":  {"Hiya Bo", "7.5 points, u-bo"}, // exact
		"cy":  {"Hello friend", "u-cy has no points"},
		"di":  {"Hello friend", "u-di has no points"},
	} {
		title, body, ok := shown(t, e, "tok-"+device, id)
		if !ok || title != want[0] || body != want[1] {
			t.Errorf("%s: got %q / %q (%v), want %q / %q", device, title, body, ok, want[0], want[1])
		}
	}

	// A marketing push: the prefix on every entry, the footer after each.
	ad := map[string]any{"userIds": []any{"u-ann", "u-cy"}, "title": "(광고) Sale", "content": "Today",
		"options":   map[string]any{"isMarketing": true},
		"localized": map[string]any{"ko": map[string]any{"title": "(광고) 세일", "content": "오늘만"}}}
	e.Server(t, a, http.MethodPatch, "/api/app-user/v2/marketing", map[string]any{"userId": "u-ann", "state": map[string]any{"marketing": true, "marketingNight": true}})
	e.Server(t, a, http.MethodPatch, "/api/app-user/v2/marketing", map[string]any{"userId": "u-cy", "state": map[string]any{"marketing": true, "marketingNight": true}})
	res = e.Server(t, a, http.MethodPost, "/api/push/v2/users", ad)
	if res.Status != http.StatusOK {
		t.Fatalf("ad push: %d %s", res.Status, res.Body)
	}
	adID := res.Header.Get("X-Push-Id")
	e.WaitFinal(adID, 10*time.Second)
	if title, body, _ := shown(t, e, "tok-ann", adID); title != "(광고) 세일" || body != "오늘만"+testenv.AdFooter {
		t.Errorf("ann's ad: got %q / %q, want the ko entry with the footer", title, body)
	}
	if title, body, _ := shown(t, e, "tok-cy", adID); title != "(광고) Sale" || body != "Today"+testenv.AdFooter {
		t.Errorf("cy's ad: got %q / %q, want the default with the footer", title, body)
	}

	// An ad in one language only is an ad push: every device of it is
	// judged by its consent, the footer follows each message.
	reg("eun", "u-eun", "ko-KR") // no marketing consent
	koAd := map[string]any{"userIds": []any{"u-ann", "u-eun"}, "title": "Weekend", "content": "News",
		"localized": map[string]any{"ko": map[string]any{"title": "(광고) 주말 세일", "content": "오늘만"}}}
	res = e.Server(t, a, http.MethodPost, "/api/push/v2/users", koAd)
	if res.Status != http.StatusOK {
		t.Fatalf("ko ad push: %d %s", res.Status, res.Body)
	}
	koID := res.Header.Get("X-Push-Id")
	if p := e.WaitFinal(koID, 10*time.Second); p.Counts.Sent != 1 || p.Counts.SuppressedConsent != 1 {
		t.Errorf("ko ad push: got %+v, want ann sent and eun suppressed for consent", p.Counts)
	}
	if _, _, ok := shown(t, e, "tok-eun", koID); ok {
		t.Errorf("eun, without consent, was sent the ko ad")
	}
	if title, body, _ := shown(t, e, "tok-ann", koID); title != "(광고) 주말 세일" || body != "오늘만"+testenv.AdFooter {
		t.Errorf("ann's ko ad: got %q / %q, want the ko entry with the footer", title, body)
	}

	// Tags that grow one user's message past FCM's limit fail that
	// delivery only.
	long := strings.Repeat("긴", 255)
	e.Server(t, a, http.MethodPut, "/api/app-user/v2/tags", map[string]any{"userId": "u-bo", "tags": map[string]any{"bio": long}})
	big := map[string]any{"userIds": []any{"u-ann", "u-bo"}, "title": "Bio", "content": strings.Repeat("{{tag.bio}}", 8)}
	res = e.Server(t, a, http.MethodPost, "/api/push/v2/users", big)
	if res.Status != http.StatusOK {
		t.Fatalf("big push: %d %s", res.Status, res.Body)
	}
	bigID := res.Header.Get("X-Push-Id")
	p := e.WaitFinal(bigID, 10*time.Second)
	if p.Counts.Sent != 1 || p.Counts.Failed != 1 || len(p.Failures) != 1 || p.Failures[0].UserID != "u-bo" ||
		!strings.Contains(p.Failures[0].Error, "4096") {
		t.Errorf("big push: got %+v, want ann sent and bo failed for the payload's size", p)
	}

	pushes := len(e.PushList(a))
	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"userIds": []any{"u-ann"}, "title": "Hi {{name}}", "content": "c"}, "title"},
		{map[string]any{"userIds": []any{"u-ann"}, "title": "t", "content": "Hi {{tag.name"}, "content"},
		{map[string]any{"userIds": []any{"u-ann"}, "title": "t", "content": "c", "localized": map[string]any{"not a tag": map[string]any{"title": "t", "content": "c"}}}, "localized.not a tag"},
		{map[string]any{"userIds": []any{"u-ann"}, "title": "t", "content": "c", "localized": map[string]any{"ko": map[string]any{"title": "t"}}}, "localized.ko.content"},
		{map[string]any{"userIds": []any{"u-ann"}, "title": "(광고) t", "content": "c", "options": map[string]any{"isMarketing": true},
			"localized": map[string]any{"ko": map[string]any{"title": "세일", "content": "c"}}}, "localized.ko.title"},
		{map[string]any{"userIds": []any{"u-ann"}, "title": "t", "content": "c", "localized": map[string]any{"ko": map[string]any{"title": "t", "content": strings.Repeat("가", 1400)}}}, "localized.ko.content"},
	} {
		res := e.Server(t, a, http.MethodPost, "/api/push/v2/users", tc.body)
		if res.Status != http.StatusBadRequest || !namesField(t, res, tc.field) {
			t.Errorf("%v: got %d %s, want 400 naming %s", tc.body["title"], res.Status, res.Body, tc.field)
		}
	}
	if got := len(e.PushList(a)); got != pushes {
		t.Errorf("pushes after refusals: got %d, want %d", got, pushes)
	}
}
