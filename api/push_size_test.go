package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2/google"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/fcm"
	"github.com/heraldpush/herald/fcm/fcmtest"
	"github.com/heraldpush/herald/internal/testenv"
)

// FCM payload arithmetic of these tests (herald.MaxFCMPayload): a 45-byte
// envelope, each key and value in UTF-8 bytes, 6 bytes per pair after the
// first; every message Herald sends carries data.pushId (6 + 27 bytes). A
// message of title "t" and a body of n bytes is 100+n bytes.
const (
	pushIDPair = 6 + 27
	tinyTitle  = 45 + (5 + 1) + 6 + 4 + 6 + pushIDPair // + the body's bytes
)

// oversizeReason is the reason Herald gives for a payload of n bytes.
func oversizeReason(n int) string {
	return fmt.Sprintf("the FCM payload would be %d bytes, more than 4096", n)
}

// TestPushSize: a message over FCM's 4,096-byte payload is refused at accept
// on every push endpoint, naming the message, with nothing stored, charged
// or sent; a message of exactly 4,096 bytes is accepted and delivered; an
// operator's edit cannot make a scheduled push oversized; the emulator
// itself refuses an oversized message as FCM does.
func TestPushSize(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "size-", "u0", "u1", "u2", "u3")

	t.Run("RefusedAtAccept", func(t *testing.T) {
		// 1,400 three-byte characters: 4,200 bytes in 1,400 code points.
		wide := strings.Repeat("가", 1400)
		emoji := func(n int) string { return "https://e.kr/" + strings.Repeat("😀", n-len("https://e.kr/")) }
		tests := []struct {
			name, path string
			body       map[string]any
			want       herald.Detail
		}{
			{"UsersTitle", usersPath, usersBody([]any{"u0", "u1"}, map[string]any{"title": strings.Repeat("a", 4000), "content": "c"}),
				herald.Detail{Field: "title", Reason: oversizeReason(45 + (5 + 4000) + 6 + (4 + 1) + 6 + pushIDPair)}},
			{"MessagesOneAmongValid", messagesPath, map[string]any{"messages": []map[string]any{
				{"userId": "u0", "title": "t", "content": "c"},
				{"userId": "u1", "title": "t", "content": "c"},
				{"userId": "u2", "title": "t", "content": wide},
				{"userId": "u3", "title": "t", "content": "c"},
			}}, herald.Detail{Field: "messages[2]", Reason: oversizeReason(tinyTitle + 4200)}},
			{"TopicContent", "/api/push/v2/topics", map[string]any{"topic": "news", "title": "t", "content": strings.Repeat("c", 5000)},
				herald.Detail{Field: "content", Reason: oversizeReason(tinyTitle + 5000)}},
			// Link and image within their limits in code points, but of
			// four-byte characters; the image carries the most bytes.
			{"AllLinkAndImage", "/api/push/v2/all", map[string]any{"title": strings.Repeat("t", 1000), "content": strings.Repeat("c", 600),
				"linkURL": emoji(herald.MaxLinkURL), "imageURL": emoji(herald.MaxImageURL)},
				herald.Detail{Field: "imageURL", Reason: oversizeReason(45 + (5 + 1000) + 6 + (4 + 600) + 6 + (5 + 13 + 487*4) +
					6 + (7 + 13 + 242*4) + 6 + pushIDPair)}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := e.ServerDo(http.MethodPost, tt.path, a.Keys(), tt.body)
				got := testenv.WantError(t, res, tt.path, herald.ErrInvalidRequest)
				if len(got.Details) != 1 || got.Details[0].Field != tt.want.Field || got.Details[0].Reason != tt.want.Reason {
					t.Errorf("details: got %+v, want [%+v]", got.Details, tt.want)
				}
				if id := res.Header.Get("X-Push-Id"); id != "" {
					t.Errorf("X-Push-Id: got %q, want none", id)
				}
			})
		}
		if ps := e.PushList(a); len(ps) != 0 {
			t.Errorf("pushes stored: got %d, want 0", len(ps))
		}
		if u := e.Usage(a); u != 0 {
			t.Errorf("usage: got %v Server Actions, want 0", u)
		}
		if s := e.Emulator.Stats(); s.Received != 0 {
			t.Errorf("emulator: got %d send requests, want 0", s.Received)
		}
	})

	t.Run("AtLimitDelivered", func(t *testing.T) {
		// 1,332 three-byte characters make a title of 3,996 bytes: with
		// body "c", a payload of exactly 4,096 bytes.
		title := strings.Repeat("가", 1332)
		users := e.ServerDo(http.MethodPost, usersPath, a.Keys(), usersBody([]any{"u0"}, map[string]any{"title": title, "content": "c"}))
		body := strings.Repeat("é", 1998) // 3,996 bytes
		messages := e.ServerDo(http.MethodPost, messagesPath, a.Keys(), map[string]any{"messages": []map[string]any{
			{"userId": "u1", "title": "t", "content": body},
			{"userId": "u2", "title": "t", "content": "c"},
		}})
		for _, c := range []struct {
			name  string
			res   testenv.Response
			token string
			users int
		}{{"Users", users, "size-u0", 1}, {"Messages", messages, "size-u1", 2}} {
			if c.res.Status != http.StatusOK {
				t.Fatalf("%s: got %d %s, want 200", c.name, c.res.Status, c.res.Body)
			}
			id := c.res.Header.Get("X-Push-Id")
			p := e.WaitFinal(id, 10*time.Second)
			if p.Status != "done" || p.Counts.Sent != c.users || p.ServerActions != float64(c.users)/2 {
				t.Errorf("%s push: got %s, %d sent, %v SA; want done, %d sent, %v SA", c.name, p.Status, p.Counts.Sent, p.ServerActions, c.users, float64(c.users)/2)
			}
			if got := wirePayloadSize(t, e, c.token, id); got != herald.MaxFCMPayload {
				t.Errorf("%s: the message FCM received counts %d bytes, want exactly 4096", c.name, got)
			}
		}
		if u := e.Usage(a); u != 1.5 {
			t.Errorf("usage: got %v Server Actions, want 1.5", u)
		}
	})

	t.Run("ScheduledEditCannotOversize", func(t *testing.T) {
		at := time.Now().Add(time.Hour).In(testenv.Seoul).Format("2006-01-02T15:04")
		p, err := schedule(a, []any{"u3"}, at)
		if err != nil {
			t.Fatal(err)
		}
		var refused testenv.ErrorBody
		code := e.AdminJSON(http.MethodPatch, "/admin/v1/pushes/"+p.PushID, map[string]any{"content": strings.Repeat("c", 4000)}, &refused)
		if code != http.StatusBadRequest || refused.Code != herald.ErrInvalidRequest.Code || len(refused.Details) != 1 || refused.Details[0].Field != "content" {
			t.Fatalf("oversized edit: got %d %+v, want 400 ERR-AB-VAL-00 naming content", code, refused)
		}
		var stored struct {
			Title, Content string
			Edits          []any
		}
		e.AdminJSON(http.MethodGet, "/admin/v1/pushes/"+p.PushID, nil, &stored)
		if stored.Content != "at "+at || len(stored.Edits) != 0 {
			t.Fatalf("after the refused edit: got content %q and %d edits, want %q and none", stored.Content, len(stored.Edits), "at "+at)
		}
		// Title "Scheduled" (9 bytes) and a body of 3,988 bytes: 4,096.
		if code := e.AdminJSON(http.MethodPatch, "/admin/v1/pushes/"+p.PushID, map[string]any{"content": strings.Repeat("c", 3988)}, nil); code != http.StatusOK {
			t.Fatalf("edit to exactly 4,096 bytes: got %d, want 200", code)
		}
		if code := e.AdminJSON(http.MethodPatch, "/admin/v1/pushes/"+p.PushID, map[string]any{"title": "Scheduled!"}, nil); code != http.StatusBadRequest {
			t.Fatalf("one more title byte: got %d, want 400", code)
		}
	})

	t.Run("EmulatorRefusesOversized", func(t *testing.T) {
		emulatorRefusesOversized(t, e)
	})
}

// wirePayloadSize counts, by FCM's rule, the message the emulator received
// for token from push id.
func wirePayloadSize(t *testing.T, e *env, token, id string) int {
	t.Helper()
	for _, r := range e.Received(token) {
		var m struct{ Notification, Data map[string]string }
		if err := json.Unmarshal(r.Message, &m); err != nil {
			t.Fatalf("decode %s: %v", r.Message, err)
		}
		if m.Data["pushId"] == id {
			return herald.FCMPayloadSize(m.Notification, m.Data)
		}
	}
	t.Fatalf("no message of push %s for %s", id, token)
	return 0
}

// emulatorRefusesOversized sends messages straight to the emulator over
// HTTP, with an access token from its /token endpoint: Herald can no longer
// send an oversized message itself.
func emulatorRefusesOversized(t *testing.T, e *env) {
	const project = "proj-direct"
	conf, err := google.JWTConfigFromJSON(fcmtest.ServiceAccountJSON(t, project, e.EmulatorURL+"/token"), fcm.MessagingScope)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := conf.TokenSource(t.Context()).Token()
	if err != nil {
		t.Fatalf("access token from the emulator: %v", err)
	}
	send := func(token, title string) (int, map[string]any) {
		body, _ := json.Marshal(map[string]any{"message": map[string]any{
			"token":        token,
			"notification": map[string]string{"title": title, "body": "c"},
			"data":         map[string]string{"pushId": strings.Repeat("p", 27)},
		}})
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.EmulatorURL+"/v1/projects/"+project+"/messages:send", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("send: %v", err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("decode answer: %v", err)
		}
		return resp.StatusCode, out
	}
	// Title of n bytes, body "c", pushId: 100+n bytes.
	status, got := send("direct-over", strings.Repeat("a", 3997))
	raw, _ := json.Marshal(got)
	want := `{"error":{"code":400,"details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"INVALID_ARGUMENT"}],` +
		`"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}`
	if status != http.StatusBadRequest || string(raw) != want {
		t.Errorf("4,097 bytes: got %d %s, want 400 %s", status, raw, want)
	}
	if status, got := send("direct-at", strings.Repeat("a", 3996)); status != http.StatusOK {
		t.Errorf("4,096 bytes: got %d %v, want 200", status, got)
	}
	if n, m := len(e.Received("direct-over")), len(e.Received("direct-at")); n != 0 || m != 1 {
		t.Errorf("emulator kept %d oversized and %d at-limit messages, want 0 and 1", n, m)
	}
}
