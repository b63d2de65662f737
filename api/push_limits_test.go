package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
)

// runes returns a URL of exactly n Unicode code points, mostly the
// three-byte "가", so a limit counted in bytes would refuse it.
func runes(n int) string {
	const head = "https://e.kr/"
	return head + strings.Repeat("가", n-len(head))
}

// numberedIDs returns n distinct user IDs "<prefix><i>".
func numberedIDs(prefix string, n int) []any {
	ids := make([]any, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return ids
}

// messagesTo returns one valid message per user ID.
func messagesTo(ids []any) []map[string]any {
	out := make([]map[string]any, len(ids))
	for i, id := range ids {
		out[i] = map[string]any{"userId": id, "title": "t", "content": "c"}
	}
	return out
}

// usersBody is a valid /users body with fields overridden.
func usersBody(ids []any, override map[string]any) map[string]any {
	b := map[string]any{"userIds": ids, "title": "Title", "content": "Content"}
	for k, v := range override {
		b[k] = v
	}
	return b
}

// padPerMessage bounds the padding of one message of messagesBodyOfSize, so
// that each message stays within FCM's 4,096-byte payload.
const padPerMessage = 3000

// messagesBodyOfSize is a valid /messages body of exactly size bytes, in
// size/padPerMessage+1 messages: the first to userID, the others to users
// pad1, pad2, …, the padding spread evenly over their contents.
func messagesBodyOfSize(t *testing.T, userID string, size int) []byte {
	t.Helper()
	n := size/padPerMessage + 1
	build := func(pad int) []byte {
		msgs := make([]map[string]any, n)
		for i := range msgs {
			id := userID
			if i > 0 {
				id = fmt.Sprintf("pad%d", i)
			}
			p := pad / n
			if i < pad%n {
				p++
			}
			msgs[i] = map[string]any{"userId": id, "title": "big", "content": "c" + strings.Repeat("x", p)}
		}
		b, err := json.Marshal(map[string]any{"messages": msgs})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	body := build(size - len(build(0)))
	if len(body) != size {
		t.Fatalf("padded body: got %d bytes, want %d", len(body), size)
	}
	return body
}

// TestPushLimitsRefused sends each limit one step past its boundary (and
// other invalid bodies): every one answers 400 ERR-AB-VAL-00 naming the
// field, stores no push and sends nothing.
func TestPushLimitsRefused(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "limit-", "u0", "u1")
	two := []any{"u0", "u1"}
	msgs := func(override map[string]any) map[string]any {
		m := map[string]any{"userId": "u0", "title": "t", "content": "c"}
		for k, v := range override {
			m[k] = v
		}
		return map[string]any{"messages": []map[string]any{m}}
	}
	opts := func(o map[string]any) map[string]any { return usersBody(two, map[string]any{"options": o}) }
	seoulTZ, err := time.LoadLocation(herald.DefaultTimeZone)
	if err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour).In(seoulTZ).Format("2006-01-02T15:04")

	tests := []struct {
		name      string
		path      string
		body      any
		wantField string
	}{
		{"UserIDs501", usersPath, usersBody(numberedIDs("u", 501), nil), "userIds"},
		{"UserIDsEmpty", usersPath, usersBody([]any{}, nil), "userIds"},
		{"UserIDsMissing", usersPath, map[string]any{"title": "t", "content": "c"}, "userIds"},
		{"UserIDFraction", usersPath, usersBody([]any{"u0", 1.5}, nil), "userIds[1]"},
		{"TitleEmpty", usersPath, usersBody(two, map[string]any{"title": ""}), "title"},
		{"ContentEmpty", usersPath, usersBody(two, map[string]any{"content": ""}), "content"},
		{"TitleMissing", usersPath, map[string]any{"userIds": two, "content": "c"}, "title"},
		{"LinkURL256", usersPath, usersBody(two, map[string]any{"linkURL": runes(256)}), "linkURL"},
		{"ImageURL501", usersPath, usersBody(two, map[string]any{"imageURL": runes(501)}), "imageURL"},
		{"RequestGroupID4", usersPath, opts(map[string]any{"requestGroupId": "abcd"}), "options.requestGroupId"},
		{"RequestGroupID21", usersPath, opts(map[string]any{"requestGroupId": strings.Repeat("a", 21)}), "options.requestGroupId"},
		{"RequestGroupIDNoLetter", usersPath, opts(map[string]any{"requestGroupId": "12345"}), "options.requestGroupId"},
		{"RequestGroupIDQuote", usersPath, opts(map[string]any{"requestGroupId": "abc'de"}), "options.requestGroupId"},
		{"RequestGroupIDDoubleQuote", usersPath, opts(map[string]any{"requestGroupId": `abc"de`}), "options.requestGroupId"},
		{"RequestGroupIDBackslash", usersPath, opts(map[string]any{"requestGroupId": `abc\de`}), "options.requestGroupId"},
		{"RequestGroupIDBacktick", usersPath, opts(map[string]any{"requestGroupId": "abc`de"}), "options.requestGroupId"},
		{"BadgeNotBoolean", usersPath, opts(map[string]any{"isUsingBadge": "yes"}), "options.isUsingBadge"},
		{"Messages201", messagesPath, map[string]any{"messages": messagesTo(numberedIDs("u", 201))}, "messages"},
		{"MessagesEmpty", messagesPath, map[string]any{"messages": []any{}}, "messages"},
		{"MessagesBody153601", messagesPath, messagesBodyOfSize(t, "u0", herald.MaxMessagesBody+1), "body"},
		{"MessagesScheduleTime", messagesPath, map[string]any{"messages": messagesTo(two), "options": map[string]any{"scheduleTime": future}}, "options.scheduleTime"},
		{"MessageTitleEmpty", messagesPath, msgs(map[string]any{"title": ""}), "messages[0].title"},
		{"MessageContentEmpty", messagesPath, msgs(map[string]any{"content": ""}), "messages[0].content"},
		{"MessageUserIDFraction", messagesPath, msgs(map[string]any{"userId": 1.5}), "messages[0].userId"},
		{"MessageLinkURL256", messagesPath, msgs(map[string]any{"linkURL": runes(256)}), "messages[0].linkURL"},
		{"MessageImageURL501", messagesPath, msgs(map[string]any{"imageURL": runes(501)}), "messages[0].imageURL"},
		{"MessagesRequestGroupID21", messagesPath, map[string]any{"messages": messagesTo(two), "options": map[string]any{"requestGroupId": strings.Repeat("b", 21)}}, "options.requestGroupId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.ServerDo(http.MethodPost, tt.path, a.Keys(), tt.body)
			got := testenv.WantError(t, res, tt.path, herald.ErrInvalidRequest)
			named := false
			for _, d := range got.Details {
				named = named || d.Field == tt.wantField
			}
			if !named {
				t.Errorf("details: got %+v, want one naming %q", got.Details, tt.wantField)
			}
			if id := res.Header.Get("X-Push-Id"); id != "" {
				t.Errorf("X-Push-Id: got %q, want none", id)
			}
			if ps := e.PushList(a); len(ps) != 0 {
				t.Errorf("pushes stored: got %d, want 0", len(ps))
			}
		})
	}
	if s := e.Emulator.Stats(); s.Received != 0 {
		t.Errorf("emulator: got %d send requests, want 0", s.Received)
	}
	if u := e.Usage(a); u != 0 {
		t.Errorf("usage: got %v Server Actions, want 0", u)
	}
}

// TestPushLimitsAccepted sends each limit exactly at its boundary: every one
// is accepted and delivered with its content intact.
func TestPushLimitsAccepted(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "edge-", "u0")

	tests := []struct {
		name      string
		path      string
		body      any
		wantUsers int
		// check, when set, inspects the message u0's token received.
		check func(t *testing.T, m map[string]any)
	}{
		{name: "UserIDs500", path: usersPath, body: usersBody(append([]any{"u0"}, numberedIDs("x", 499)...), nil), wantUsers: 500},
		{name: "UserIDs1", path: usersPath, body: usersBody([]any{"u0"}, nil), wantUsers: 1},
		{name: "Messages200", path: messagesPath, body: map[string]any{"messages": messagesTo(append([]any{"u0"}, numberedIDs("x", 199)...))}, wantUsers: 200},
		{name: "MessagesBody153600", path: messagesPath, body: messagesBodyOfSize(t, "u0", herald.MaxMessagesBody),
			wantUsers: herald.MaxMessagesBody/padPerMessage + 1,
			check: func(t *testing.T, m map[string]any) {
				if body, _ := at(m, "notification", "body").(string); len(body) < padPerMessage*9/10 {
					t.Errorf("notification.body: got %d bytes, want the padded content", len(body))
				}
			}},
		{name: "LinkURL255", path: usersPath, body: usersBody([]any{"u0"}, map[string]any{"linkURL": runes(255)}), wantUsers: 1,
			check: func(t *testing.T, m map[string]any) { wantAt(t, m, runes(255), "data", "linkURL") }},
		{name: "ImageURL500", path: usersPath, body: usersBody([]any{"u0"}, map[string]any{"imageURL": runes(500)}), wantUsers: 1,
			check: func(t *testing.T, m map[string]any) { wantAt(t, m, runes(500), "notification", "image") }},
		{name: "MessageLinkAndImageAtLimit", path: messagesPath, body: map[string]any{"messages": []map[string]any{
			{"userId": "u0", "title": "t", "content": "c", "linkURL": runes(255), "imageURL": runes(500)}}}, wantUsers: 1,
			check: func(t *testing.T, m map[string]any) {
				wantAt(t, m, runes(255), "data", "linkURL")
				wantAt(t, m, runes(500), "apns", "fcm_options", "image")
			}},
		{name: "RequestGroupID5", path: usersPath, body: usersBody([]any{"u0"}, map[string]any{"options": map[string]any{"requestGroupId": "abcde"}}), wantUsers: 1},
		{name: "RequestGroupID20", path: usersPath, body: usersBody([]any{"u0"}, map[string]any{"options": map[string]any{"requestGroupId": "A1-_.!#$%&()*+,/:;<="}}), wantUsers: 1},
		{name: "MessagesRequestGroupID20", path: messagesPath, body: map[string]any{"messages": messagesTo([]any{"u0"}),
			"options": map[string]any{"requestGroupId": strings.Repeat("z", 20), "isUsingBadge": false}}, wantUsers: 1},
		{name: "UserIDInteger", path: usersPath, body: usersBody([]any{"u0", 12345}, nil), wantUsers: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.ServerDo(http.MethodPost, tt.path, a.Keys(), tt.body)
			if res.Status != http.StatusOK {
				t.Fatalf("status: got %d %s, want 200", res.Status, res.Body)
			}
			id := res.Header.Get("X-Push-Id")
			p := e.WaitFinal(id, 10*time.Second)
			if p.Status != "done" || p.Counts.RequestedUsers != tt.wantUsers || p.Counts.Sent != 1 {
				t.Errorf("push: got status %s requested %d sent %d, want done %d 1", p.Status, p.Counts.RequestedUsers, p.Counts.Sent, tt.wantUsers)
			}
			if want := float64(tt.wantUsers) / 2; p.ServerActions != want {
				t.Errorf("serverActions: got %v, want %v", p.ServerActions, want)
			}
			sent := e.SentTo(id)
			if sent["edge-u0"] != 1 || len(sent) != 1 {
				t.Fatalf("messages by token: got %v, want edge-u0 once", sent)
			}
			if tt.check != nil {
				for _, r := range e.Received("edge-u0") {
					if m := fcmMessage(t, r.Message); at(m, "data", "pushId") == id {
						tt.check(t, m)
					}
				}
			}
		})
	}
}

// TestPushDuplicateUserIDs: a user named twice (also as "7" and 7) is sent
// once and charged once.
func TestPushDuplicateUserIDs(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "dup-", "d1", "d2", "7")
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{
		UserIDs: []any{"d1", "d1", "d2", 7, "7", "d2"}, Title: "t", Content: "c",
	})
	if err != nil {
		t.Fatalf("push: got %v, want nil", err)
	}
	p := e.WaitFinal(res.PushID, 10*time.Second)
	if p.Counts.RequestedUsers != 3 || p.Counts.Sent != 3 || p.Counts.Unreachable != 0 {
		t.Errorf("counts: got %+v, want requested 3 sent 3 unreachable 0", p.Counts)
	}
	if p.ServerActions != 1.5 {
		t.Errorf("serverActions: got %v, want 1.5", p.ServerActions)
	}
	want := map[string]int{"dup-d1": 1, "dup-d2": 1, "dup-7": 1}
	if got := e.SentTo(res.PushID); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("messages by token: got %v, want %v", got, want)
	}
	if got := e.Usage(a); got != 1.5 {
		t.Errorf("usage: got %v Server Actions, want 1.5", got)
	}
}

// TestPushGates: an unregistered app answers 404 ERR-AB-PSS-91, an app
// without FCM credentials 404 ERR-AB-PSS-92, after the key checks and before
// the body is read.
func TestPushGates(t *testing.T) {
	t.Parallel()
	e := start(t)
	unregistered := e.NewApp(map[string]any{"registered": false})
	noFCM := e.NewAppWithoutFCM(nil)
	e.Register(unregistered, "gate-", "u1")
	e.Register(noFCM, "gate-", "u1")
	valid := map[string]any{"users": usersBody([]any{"u1"}, nil), "messages": map[string]any{"messages": messagesTo([]any{"u1"})}}
	badSecret := "hs_" + strings.Repeat("A", 40)
	unknownKey := "hk_" + strings.Repeat("B", 32)

	for _, path := range []string{usersPath, messagesPath} {
		body := valid[strings.TrimPrefix(path, "/api/push/v2/")]
		t.Run(path, func(t *testing.T) {
			tests := []struct {
				name   string
				header map[string]string
				body   any
				want   *herald.Error
			}{
				{"Unregistered", unregistered.Keys(), body, herald.ErrAppNotFound},
				{"UnregisteredInvalidBody", unregistered.Keys(), `{"userIds": 5}`, herald.ErrAppNotFound},
				{"UnregisteredWrongSecret", map[string]string{"x-api-key": unregistered.APIKey, "x-secret-key": badSecret}, body, herald.ErrBadSecretKey},
				{"UnregisteredNoSecret", map[string]string{"x-api-key": unregistered.APIKey}, body, herald.ErrNoSecretKey},
				{"UnregisteredNoAPIKey", map[string]string{"x-secret-key": unregistered.SecretKey}, body, herald.ErrNoAPIKey},
				{"NoKeys", nil, body, herald.ErrNoKeys},
				{"MalformedAPIKey", map[string]string{"x-api-key": "nope", "x-secret-key": badSecret}, body, herald.ErrBadAPIKeyType},
				{"UnknownAPIKey", map[string]string{"x-api-key": unknownKey, "x-secret-key": badSecret}, body, herald.ErrUnknownAPIKey},
				{"NoFCM", noFCM.Keys(), body, herald.ErrNoFCM},
				{"NoFCMInvalidBody", noFCM.Keys(), `not json`, herald.ErrNoFCM},
				{"NoFCMWrongSecret", map[string]string{"x-api-key": noFCM.APIKey, "x-secret-key": badSecret}, body, herald.ErrBadSecretKey},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					res := e.ServerDo(http.MethodPost, path, tt.header, tt.body)
					testenv.WantError(t, res, path, tt.want)
				})
			}
		})
	}
	got := testenv.WantError(t, e.ServerDo(http.MethodPost, usersPath, noFCM.Keys(), valid["users"]), usersPath, herald.ErrNoFCM)
	if got.Message != "FCM Account data not found." {
		t.Errorf("message: got %q, want %q", got.Message, "FCM Account data not found.")
	}
	if len(got.Details) != 1 || !strings.Contains(got.Details[0].Reason, "PUT /admin/v1/apps/{appId}/fcm-credentials") {
		t.Errorf("details: got %+v, want one naming the upload, PUT /admin/v1/apps/{appId}/fcm-credentials", got.Details)
	}
	for _, a := range []testenv.App{unregistered, noFCM} {
		if ps := e.PushList(a); len(ps) != 0 {
			t.Errorf("pushes of %s: got %d, want 0", a.ID, len(ps))
		}
	}

	t.Run("GatesFollowSettings", func(t *testing.T) {
		a := e.NewApp(nil)
		e.Register(a, "gate2-", "u1")
		e.PatchApp(a, map[string]any{"registered": false})
		testenv.WantError(t, e.ServerDo(http.MethodPost, usersPath, a.Keys(), valid["users"]), usersPath, herald.ErrAppNotFound)
		e.PatchApp(a, map[string]any{"registered": true})
		if code := e.AdminJSON("DELETE", "/admin/v1/apps/"+a.ID+"/fcm-credentials", nil, nil); code != http.StatusNoContent {
			t.Fatalf("delete credentials: got %d, want 204", code)
		}
		testenv.WantError(t, e.ServerDo(http.MethodPost, messagesPath, a.Keys(), valid["messages"]), messagesPath, herald.ErrNoFCM)
		e.PutCredentials(a, "proj-gate2")
		res := e.ServerDo(http.MethodPost, usersPath, a.Keys(), valid["users"])
		if res.Status != http.StatusOK {
			t.Fatalf("with credentials again: got %d %s, want 200", res.Status, res.Body)
		}
		if p := e.WaitFinal(res.Header.Get("X-Push-Id"), 10*time.Second); p.Counts.Sent != 1 {
			t.Errorf("sent: got %d, want 1", p.Counts.Sent)
		}
	})
	if s := e.Emulator.Stats(); s.Received != 1 {
		t.Errorf("emulator: got %d send requests, want 1 (the last push only)", s.Received)
	}
}

// TestPushIdempotencyKey: a repeat with the same key and body replays the
// first answer and sends nothing; a different body is 409 ERR-AB-IDM-01.
func TestPushIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "idem-", "u1", "u2")
	body := []byte(`{"userIds":["u1","u2"],"title":"Once","content":"only once"}`)
	withKey := func(key string) map[string]string {
		h := a.Keys()
		h["Idempotency-Key"] = key
		return h
	}

	first := e.ServerDo(http.MethodPost, usersPath, withKey("order-42"), body)
	if first.Status != http.StatusOK {
		t.Fatalf("first: got %d %s, want 200", first.Status, first.Body)
	}
	id := first.Header.Get("X-Push-Id")
	t.Run("SameBodyReplays", func(t *testing.T) {
		again := e.ServerDo(http.MethodPost, usersPath, withKey("order-42"), body)
		if again.Status != http.StatusOK || string(again.Body) != string(first.Body) {
			t.Errorf("replay: got %d %s, want 200 %s", again.Status, again.Body, first.Body)
		}
		if got := again.Header.Get("X-Push-Id"); got != id {
			t.Errorf("X-Push-Id: got %q, want %q", got, id)
		}
	})
	e.WaitFinal(id, 10*time.Second)
	t.Run("SameBodyAfterDone", func(t *testing.T) {
		again := e.ServerDo(http.MethodPost, usersPath, withKey("order-42"), body)
		if got := again.Header.Get("X-Push-Id"); again.Status != http.StatusOK || got != id {
			t.Errorf("replay: got %d X-Push-Id %q, want 200 %q", again.Status, got, id)
		}
	})
	t.Run("DifferentBodyConflicts", func(t *testing.T) {
		other := []byte(`{"userIds":["u1"],"title":"Once","content":"changed"}`)
		res := e.ServerDo(http.MethodPost, usersPath, withKey("order-42"), other)
		testenv.WantError(t, res, usersPath, herald.ErrIdempotencyReuse)
	})
	t.Run("SameKeyOtherEndpointConflicts", func(t *testing.T) {
		res := e.ServerDo(http.MethodPost, messagesPath, withKey("order-42"), map[string]any{"messages": messagesTo([]any{"u1"})})
		testenv.WantError(t, res, messagesPath, herald.ErrIdempotencyReuse)
	})
	if ps := e.PushList(a); len(ps) != 1 || ps[0].PushID != id {
		t.Fatalf("pushes: got %d, want only %s", len(ps), id)
	}
	if got := e.SentTo(id); got["idem-u1"] != 1 || got["idem-u2"] != 1 || len(got) != 2 {
		t.Errorf("messages by token: got %v, want each token once", got)
	}
	if s := e.Emulator.Stats(); s.Received != 2 {
		t.Errorf("emulator: got %d send requests, want 2", s.Received)
	}
	if u := e.Usage(a); u != 1 {
		t.Errorf("usage: got %v Server Actions, want 1 (charged once)", u)
	}

	t.Run("OtherKeySends", func(t *testing.T) {
		res := e.ServerDo(http.MethodPost, usersPath, withKey("order-43"), body)
		if got := res.Header.Get("X-Push-Id"); res.Status != http.StatusOK || got == id || got == "" {
			t.Errorf("other key: got %d X-Push-Id %q, want 200 and a new push", res.Status, got)
		}
	})
}

func TestPushNullOptionalMembers(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1")
	for _, tc := range []struct{ path, body string }{
		{"/api/push/v2/users", `{"userIds":["u1"],"title":"t","content":"c","linkURL":null,"imageURL":null,"options":null}`},
		{"/api/push/v2/users", `{"userIds":["u1"],"title":"t","content":"c","options":{"isUsingBadge":null,"requestGroupId":null,"scheduleTime":null,"isMarketing":null}}`},
		{"/api/push/v2/messages", `{"messages":[{"userId":"u1","title":"t","content":"c","linkURL":null}],"options":{"scheduleTime":null}}`},
	} {
		res := e.ServerDo("POST", tc.path, a.Keys(), json.RawMessage(tc.body))
		if res.Status != http.StatusOK {
			t.Errorf("%s %s: got %d %s, want 200", tc.path, tc.body, res.Status, res.Body)
		}
	}
	res := e.ServerDo("POST", "/api/push/v2/users", a.Keys(), json.RawMessage(`{"userIds":["u1"],"title":null,"content":"c"}`))
	if res.Status != http.StatusBadRequest {
		t.Errorf("null title: got %d, want 400", res.Status)
	}
}
