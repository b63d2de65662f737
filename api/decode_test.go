package api_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

// padded returns a JSON object body of exactly size bytes, padded with
// spaces inside the object.
func padded(json string, size int) string {
	return json[:len(json)-1] + strings.Repeat(" ", size-len(json)) + "}"
}

const maxBody = 1 << 20

// TestBadBodiesChangeNothing sends every kind of refused body to every
// endpoint that writes, and checks the user and its devices afterwards.
func TestBadBodiesChangeNothing(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "tok-1", "u1")
	env.RegisterToken(t, app, "d2", "tok-2", "u1")
	setConsent(t, env, app, "u1", day)

	endpoints := []struct {
		name   string
		method string
		path   string
		sdk    bool
		good   string // a body that would change state
	}{
		{"PatchMarketing", http.MethodPatch, marketingPath, false, `{"userId":"u1","state":{"marketing":false}}`},
		{"DeleteUser", http.MethodDelete, withdrawPath, false, `{"userId":"u1"}`},
		{"RegisterPushToken", http.MethodPost, pushTokenPath, true, `{"deviceId":"d1","token":"tok-new","platform":"ios","appSourceVersion":"1.0.0","userId":"u9"}`},
		{"SetUserID", http.MethodPost, setUserPath, true, `{"deviceId":"d1","userId":null}`},
		{"DeviceConsent", http.MethodPatch, consentPath, true, `{"deviceId":"d1","marketing":false}`},
		{"DeletePushToken", http.MethodDelete, pushTokenPath, true, `{"deviceId":"d1"}`},
	}
	bodies := []struct {
		name        string
		body        func(good string) string
		contentType string
	}{
		{"ErrTruncatedJSON", func(g string) string { return g[:len(g)-1] }, ""},
		{"ErrNotJSON", func(string) string { return "userId=u1" }, ""},
		{"ErrTrailingGarbage", func(g string) string { return g + "x" }, ""},
		{"ErrTrailingObject", func(g string) string { return g + "{}" }, ""},
		{"ErrArray", func(g string) string { return "[" + g + "]" }, ""},
		{"ErrString", func(g string) string { return `"` + strings.ReplaceAll(g, `"`, `\"`) + `"` }, ""},
		{"ErrEmpty", func(string) string { return "" }, ""},
		{"ErrWrongTypes", func(g string) string {
			for _, r := range [][2]string{{`"u1"`, `["u1"]`}, {`"d1"`, `{"id":"d1"}`}} {
				g = strings.ReplaceAll(g, r[0], r[1])
			}
			return g
		}, ""},
		{"ErrOverOneMiB", func(g string) string { return padded(g, maxBody+1) }, ""},
		{"ErrFarOverOneMiB", func(g string) string { return padded(g, 3*maxBody) }, ""},
		{"ErrTextPlain", func(g string) string { return g }, "text/plain"},
		{"ErrFormEncoded", func(g string) string { return g }, "application/x-www-form-urlencoded"},
		{"ErrJSONLookalike", func(g string) string { return g }, "application/jsonp"},
		{"ErrMalformedContentType", func(g string) string { return g }, "application/json; charset"},
	}
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			t.Parallel()
			for _, b := range bodies {
				t.Run(b.name, func(t *testing.T) {
					h := map[string]string{"x-api-key": app.APIKey}
					if !ep.sdk {
						h["x-secret-key"] = app.SecretKey
					}
					if b.contentType != "" {
						h["Content-Type"] = b.contentType
					}
					res := env.Do(t, testenv.Request{Method: ep.method, URL: ep.path, Header: h, Body: b.body(ep.good)})
					testenv.WantError(t, res, ep.path, herald.ErrInvalidRequest)
				})
			}
		})
	}
	t.Cleanup(func() {
		u := env.User(t, app, "u1")
		if u.State != "registered" || u.Consent() != day {
			t.Errorf("user: got %s %+v, want registered %+v", u.State, u.Consent(), day)
		}
		var got []string
		for _, d := range u.Devices {
			got = append(got, d.DeviceID+"/"+d.TokenSuffix)
			if d.Consent() != day {
				t.Errorf("device %s consent: got %+v, want %+v", d.DeviceID, d.Consent(), day)
			}
		}
		if want := []string{"d1/tok-1", "d2/tok-2"}; !equal(got, want) {
			t.Errorf("devices: got %v, want %v", got, want)
		}
		if res := env.AdminDo(t, http.MethodGet, "/admin/v1/apps/"+app.ID+"/users/u9", nil); res.Status != http.StatusNotFound {
			t.Errorf("user u9 of a refused registration: got %d, want 404", res.Status)
		}
	})
}

func TestContentTypesAccepted(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "tok-1", "u1")
	tests := []struct {
		name        string
		contentType string // "none" sends no header
	}{
		{"JSON", "application/json"},
		{"JSONCharset", "application/json; charset=utf-8"},
		{"JSONCharsetUpper", "Application/JSON; charset=UTF-8"},
		{"None", "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{"x-api-key": app.APIKey, "x-secret-key": app.SecretKey}
			if tt.contentType != "none" {
				h["Content-Type"] = tt.contentType
			}
			res := env.Do(t, testenv.Request{Method: http.MethodPatch, URL: marketingPath, Header: h, NoContentType: true,
				Body: `{"userId":"u1","state":{"marketing":true}}`})
			if res.Status != http.StatusOK {
				t.Errorf("PATCH: got %d %s, want 200", res.Status, res.Body)
			}
			delete(h, "x-secret-key")
			res = env.Do(t, testenv.Request{Method: http.MethodPatch, URL: consentPath, Header: h, NoContentType: true,
				Body: `{"deviceId":"d1","marketingNight":false}`})
			if res.Status != http.StatusOK {
				t.Errorf("SDK consent: got %d %s, want 200", res.Status, res.Body)
			}
		})
	}
}

func TestBodySizeLimit(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "tok-1", "u1")

	res := env.Server(t, app, http.MethodPatch, marketingPath, padded(`{"userId":"u1","state":{"marketing":true}}`, maxBody))
	if res.Status != http.StatusOK {
		t.Errorf("body of exactly 1 MiB: got %d %.200s, want 200", res.Status, res.Body)
	}
	res = env.Server(t, app, http.MethodPatch, marketingPath, padded(`{"userId":"u1","state":{"marketing":false}}`, maxBody+1))
	got := testenv.WantError(t, res, marketingPath, herald.ErrInvalidRequest)
	if len(got.Details) != 1 || got.Details[0].Field != "body" {
		t.Errorf("details: got %+v, want one on body", got.Details)
	}
	wantPair(t, env, app, "u1", day, 1)
}

// The Server API endpoints with a body, as the fake handler tests send them.
const (
	usersPath       = "/api/push/v2/users"
	messagesPath    = "/api/push/v2/messages"
	topicsPath      = "/api/push/v2/topics"
	allPath         = "/api/push/v2/all"
	subscribePath   = "/api/topic/v2/subscribe"
	unsubscribePath = "/api/topic/v2/unsubscribe"
	tokenPath       = "/api/push-token/v2"
)

// TestUnknownMembersRefused sends every Server API endpoint a good body
// (accepted) and the same body with one member it does not know: 400
// naming the member by its path, and nothing asked of the next layer.
func TestUnknownMembersRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, path, good, bad, field string
	}{
		{"UsersOptionTypo", http.MethodPost, usersPath,
			`{"userIds":["u1"],"title":"t","content":"c","options":{"scheduleTime":"2025-06-11T22:06"}}`,
			`{"userIds":["u1"],"title":"t","content":"c","option":{"scheduleTime":"2025-06-11T22:06"}}`, "option"},
		{"UsersScheduleTimeCase", http.MethodPost, usersPath,
			`{"userIds":["u1"],"title":"t","content":"c","options":{"scheduleTime":"2025-06-11T22:06"}}`,
			`{"userIds":["u1"],"title":"t","content":"c","options":{"scheduletime":"2025-06-11T22:06"}}`, "options.scheduletime"},
		{"UsersNullUnknown", http.MethodPost, usersPath,
			`{"userIds":["u1"],"title":"t","content":"c"}`, `{"userIds":["u1"],"title":"t","content":"c","option":null}`, "option"},
		{"UsersTitleCase", http.MethodPost, usersPath,
			`{"userIds":["u1"],"title":"t","content":"c"}`, `{"userIds":["u1"],"title":"t","Title":"T","content":"c"}`, "Title"},
		{"MessagesElement", http.MethodPost, messagesPath,
			`{"messages":[{"userId":"a","title":"t","content":"c"},{"userId":"b","title":"t","content":"c"},{"userId":"c","title":"t","content":"c"}]}`,
			`{"messages":[{"userId":"a","title":"t","content":"c"},{"userId":"b","title":"t","content":"c"},{"userId":"c","title":"t","titel":"x","content":"c"}]}`,
			"messages[2].titel"},
		{"MessagesTopLevel", http.MethodPost, messagesPath,
			`{"messages":[{"userId":"a","title":"t","content":"c"}]}`,
			`{"messages":[{"userId":"a","title":"t","content":"c"}],"scheduleTime":"2025-06-11T22:06"}`, "scheduleTime"},
		{"TopicOptions", http.MethodPost, topicsPath,
			`{"topic":"news","title":"t","content":"c","options":{"isUsingBadge":true}}`,
			`{"topic":"news","title":"t","content":"c","options":{"isUsingBadge":true,"badge":1}}`, "options.badge"},
		{"AllWithUserIds", http.MethodPost, allPath,
			`{"title":"t","content":"c"}`, `{"userIds":["u1"],"title":"t","content":"c"}`, "userIds"},
		{"MarketingState", http.MethodPatch, marketingPath,
			`{"userId":"u1","state":{"marketing":true}}`, `{"userId":"u1","state":{"marketing":true,"sms":true}}`, "state.sms"},
		{"MarketingTopLevel", http.MethodPatch, marketingPath,
			`{"userId":"u1","state":{"marketing":true}}`, `{"userId":"u1","marketing":false,"state":{"marketing":true}}`, "marketing"},
		{"Withdraw", http.MethodDelete, withdrawPath, `{"userId":"u1"}`, `{"userId":"u1","reason":"asked"}`, "reason"},
		{"Subscribe", http.MethodPost, subscribePath,
			`{"topic":"news","userIds":["u1"]}`, `{"topic":"news","userIds":["u1"],"userId":"u2"}`, "userId"},
		{"Unsubscribe", http.MethodPost, unsubscribePath,
			`{"topic":"news","userIds":["u1"]}`, `{"topic":"news","userIds":["u1"],"topics":["x"]}`, "topics"},
		{"DeletePushToken", http.MethodDelete, tokenPath, `{"token":"tok-1"}`, `{"token":"tok-1","deviceId":"d1"}`, "deviceId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := newFakeAPI()
			if res := a.do(tt.method, tt.path, tt.good); res.Status != http.StatusOK || len(a.take()) != 1 {
				t.Fatalf("good body: got %d %s, want 200 and one write", res.Status, res.Body)
			}
			a.wantUnknown(t, a.do(tt.method, tt.path, tt.bad), tt.field)
		})
	}
}

// TestUnknownMembersAfterGates: an unknown member is a body problem (step 8
// of DESIGN.md section 4), so a closed gate still answers first.
func TestUnknownMembersAfterGates(t *testing.T) {
	t.Parallel()
	a := newFakeAPI()
	a.app.FCMCredentials = nil
	res := a.do(http.MethodPost, usersPath, `{"userIds":["u1"],"title":"t","content":"c","option":{}}`)
	if res.Status != http.StatusNotFound || res.Err.Code != herald.ErrNoFCM.Code {
		t.Errorf("got %d %s, want 404 %s", res.Status, res.Body, herald.ErrNoFCM.Code)
	}
	a.app.AppUserEnabled = false
	res = a.do(http.MethodPatch, marketingPath, `{"userId":"u1","state":{"marketing":true},"x":1}`)
	if res.Status != http.StatusForbidden || res.Err.Code != herald.ErrMarketingUnavailable.Code {
		t.Errorf("got %d %s, want 403 %s", res.Status, res.Body, herald.ErrMarketingUnavailable.Code)
	}
}

// TestSDKIgnoresUnknownMembers: the SDK API reads what it knows and ignores
// the rest, at the top and beside every value, on the real store.
func TestSDKIgnoresUnknownMembers(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	calls := []struct{ method, path, body string }{
		{http.MethodPost, pushTokenPath, `{"deviceId":"d1","token":"tok-1","platform":"ios","appSourceVersion":"1.6.0","userId":"u1","sdkVersion":"9.9.9","extra":{"a":[1]}}`},
		{http.MethodPost, setUserPath, `{"deviceId":"d1","userId":"u2","future":true}`},
		{http.MethodPatch, consentPath, `{"deviceId":"d1","marketing":true,"source":"settings"}`},
	}
	for _, c := range calls {
		if res := env.SDK(t, app, c.method, c.path, c.body); res.Status != http.StatusOK {
			t.Fatalf("%s %s: got %d %s, want 200", c.method, c.path, res.Status, res.Body)
		}
	}
	u := env.User(t, app, "u2")
	if len(u.Devices) != 1 || u.Devices[0].DeviceID != "d1" || !u.Devices[0].Marketing {
		t.Errorf("u2: got %+v, want d1 with marketing on", u)
	}
	if res := env.SDK(t, app, http.MethodDelete, pushTokenPath, `{"deviceId":"d1","reason":"logout"}`); res.Status != http.StatusOK {
		t.Errorf("delete: got %d %s, want 200", res.Status, res.Body)
	}
}

// TestInvalidTextRefused sends strings holding invalid UTF-8 or lone
// surrogate escapes to every kind of endpoint: 400 naming the field, and
// nothing asked of the next layer. A surrogate pair is text like any other.
func TestInvalidTextRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, path, body, field string
	}{
		{"UsersUserIDLoneHigh", http.MethodPost, usersPath, `{"userIds":["u1","\ud800"],"title":"t","content":"c"}`, "userIds[1]"},
		{"UsersUserIDBadByte", http.MethodPost, usersPath, "{\"userIds\":[\"u\xff1\"],\"title\":\"t\",\"content\":\"c\"}", "userIds[0]"},
		{"UsersTitleLoneLow", http.MethodPost, usersPath, `{"userIds":["u1"],"title":"hi \udc00","content":"c"}`, "title"},
		{"UsersTitleBadByte", http.MethodPost, usersPath, "{\"userIds\":[\"u1\"],\"title\":\"\xc3\x28\",\"content\":\"c\"}", "title"},
		{"UsersGroup", http.MethodPost, usersPath, `{"userIds":["u1"],"title":"t","content":"c","options":{"requestGroupId":"grp\ud83d1"}}`, "options.requestGroupId"},
		{"MessagesContent", http.MethodPost, messagesPath, `{"messages":[{"userId":"a","title":"t","content":"x\ud83d"}]}`, "messages[0].content"},
		{"TopicTitle", http.MethodPost, topicsPath, "{\"topic\":\"news\",\"title\":\"\xed\xa0\x80\",\"content\":\"c\"}", "title"},
		{"AllLink", http.MethodPost, allPath, `{"title":"t","content":"c","linkURL":"https://x/\udfff"}`, "linkURL"},
		{"Marketing", http.MethodPatch, marketingPath, `{"userId":"\ud800","state":{"marketing":true}}`, "userId"},
		{"Withdraw", http.MethodDelete, withdrawPath, "{\"userId\":\"\xfe\"}", "userId"},
		{"SDKRegister", http.MethodPost, pushTokenPath, `{"deviceId":"d1","token":"t\ud800","platform":"ios","appSourceVersion":"1.6.0"}`, "token"},
		{"SDKUnknownMember", http.MethodPost, setUserPath, `{"deviceId":"d1","userId":"u1","note":"\ud800"}`, "note"},
		{"SDKConsentDevice", http.MethodPatch, consentPath, "{\"deviceId\":\"d\xff\",\"marketing\":true}", "deviceId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := newFakeAPI()
			res := a.do(tt.method, tt.path, tt.body)
			if res.Status != http.StatusBadRequest || len(res.Err.Details) == 0 || res.Err.Details[0].Field != tt.field {
				t.Fatalf("got %d %s, want 400 naming %s", res.Status, res.Body, tt.field)
			}
			if calls := a.take(); len(calls) > 0 {
				t.Errorf("a refused request asked for %+v, want nothing", calls)
			}
		})
	}
	t.Run("SurrogatePair", func(t *testing.T) {
		t.Parallel()
		a := newFakeAPI()
		res := a.do(http.MethodPost, usersPath, `{"userIds":["\ud83d\ude00"],"title":"\uD83D\uDE00 hi","content":"c"}`)
		calls := a.take()
		if res.Status != http.StatusOK || len(calls) != 1 {
			t.Fatalf("got %d %s, want 200 and one push", res.Status, res.Body)
		}
		if got := calls[0]; got.Recipients[0].UserID != "😀" || got.Push.Content.Title != "😀 hi" {
			t.Errorf("got user %q title %q, want 😀 and 😀 hi", got.Recipients[0].UserID, got.Push.Content.Title)
		}
	})
}

// TestInvalidUserIDsStayApart: two userIds that differ only in bytes Go
// would turn into U+FFFD are refused on the real store, so they never
// become one user.
func TestInvalidUserIDsStayApart(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	for i, id := range []string{"user\xff", "user\xfe", `user\ud800`, `user\udbff`} {
		body := `{"deviceId":"d` + string(rune('0'+i)) + `","token":"tok","platform":"ios","appSourceVersion":"1.6.0","userId":"` + id + `"}`
		res := env.SDK(t, app, http.MethodPost, pushTokenPath, body)
		got := testenv.WantError(t, res, pushTokenPath, herald.ErrInvalidRequest)
		if len(got.Details) != 1 || got.Details[0].Field != "userId" {
			t.Errorf("%q: details %+v, want one on userId", id, got.Details)
		}
	}
	if res := env.AdminDo(t, http.MethodGet, "/admin/v1/apps/"+app.ID+"/users/user%EF%BF%BD", nil); res.Status != http.StatusNotFound {
		t.Errorf("user with U+FFFD: got %d %s, want 404", res.Status, res.Body)
	}
}

// createGateApp creates an app with settings. The admin API refuses the
// app-user feature below the business tier, so such an app is made as one
// stored before that rule: created on business, then lowered in the store.
func createGateApp(t *testing.T, env *testenv.Env, settings map[string]any) testenv.App {
	t.Helper()
	tier, _ := settings["tier"].(string)
	if on, _ := settings["appUserEnabled"].(bool); !on || herald.Tier(tier).AtLeastBusiness() {
		return env.CreateApp(t, settings)
	}
	app := env.CreateApp(t, map[string]any{"tier": "business", "appUserEnabled": true})
	ctx := context.Background()
	a, err := env.DB.App(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	a.Tier = herald.Tier(tier)
	if err := env.DB.UpdateApp(ctx, a); err != nil {
		t.Fatal(err)
	}
	return app
}

// TestMessagesElementsNamed: each problem of a messages array is named by
// its element, in the order of the elements, whether every element is an
// object or some are not, and nothing is asked of the next layer.
func TestMessagesElementsNamed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       []string
	}{
		{"Objects", `{"messages":[{"userId":"a","title":"t","content":"c"},{"userId":"","title":"t","content":"c","x":1},{"userId":"c","title":"","content":"c"}]}`,
			[]string{"messages[1].userId", "messages[2].title", "messages[1].x"}},
		{"NotObjects", `{"messages":[{"userId":"","title":"t","content":"c"},1,null,{"userId":"d","content":"c","x":1},[]]}`,
			[]string{"messages[0].userId", "messages[1]", "messages[2]", "messages[3].title", "messages[4]", "messages[3].x"}},
		{"Empty", `{"messages":[]}`, []string{"messages"}},
		{"NotArray", `{"messages":{"userId":"a"}}`, []string{"messages"}},
		{"Missing", `{}`, []string{"messages"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := newFakeAPI()
			res := a.do(http.MethodPost, messagesPath, tt.body)
			var got []string
			for _, d := range res.Err.Details {
				got = append(got, d.Field)
			}
			if res.Status != http.StatusBadRequest || !slices.Equal(got, tt.want) {
				t.Errorf("got %d %v (%s), want 400 naming %v", res.Status, got, res.Body, tt.want)
			}
			if n := len(a.take()); n != 0 {
				t.Errorf("%d writes, want none", n)
			}
		})
	}
}

// TestBodyCutShortOfItsLength: a push whose body ends before its declared
// Content-Length (the client half-closes the connection) is refused as
// unreadable, in the spec's error shape, and no push is stored.
func TestBodyCutShortOfItsLength(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	body := `{"userIds":["u1"],"title":"t","content":"c"}`
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.API.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/push/v2/users HTTP/1.1\r\nHost: herald\r\nContent-Type: application/json\r\n"+
		"x-api-key: %s\r\nx-secret-key: %s\r\nContent-Length: %d\r\n\r\n%s", a.APIKey, a.SecretKey, len(body)+10, body)
	conn.(*net.TCPConn).CloseWrite()
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(got), `"could not be read"`) {
		t.Errorf("got %d %s, want 400 naming the body as unreadable", res.StatusCode, got)
	}
	var pushes int
	if err := e.QueryRow(`SELECT COUNT(*) FROM pushes`).Scan(&pushes); err != nil || pushes != 0 {
		t.Errorf("pushes stored: %d (%v), want none", pushes, err)
	}
}
