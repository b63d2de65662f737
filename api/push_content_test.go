package api_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
)

// fcmMessage decodes the FCM message object the emulator received.
func fcmMessage(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("decode FCM message %s: %v", raw, err)
	}
	return m
}

// at returns the value at the path of member names, or nil when absent.
func at(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// onlyMessage returns the one message the emulator received for token.
func (e *env) onlyMessage(token string) map[string]any {
	e.T.Helper()
	msgs := e.Received(token)
	if len(msgs) != 1 {
		e.T.Fatalf("messages for %s: got %d, want 1", token, len(msgs))
	}
	return fcmMessage(e.T, msgs[0].Message)
}

// wantAt checks the value at a path of an FCM message; want nil means the
// member must be absent.
func wantAt(t *testing.T, m map[string]any, want any, path ...string) {
	t.Helper()
	got := at(m, path...)
	if w, ok := want.(int); ok {
		want = float64(w) // JSON numbers decode as float64
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%v: got %#v, want %#v", path, got, want)
	}
}

func TestPushContentUsers(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	e.Device(a, "d-android", "content-android", "android", "1.6.0", "c1")
	e.Device(a, "d-ios", "content-ios", "ios", "1.6.0", "c2")
	e.Device(a, "d-web", "content-web", "web", "1.6.0", "c3")
	// Below 1.5.0 (badge) and 1.6.0 (image): still sent the same message.
	e.Device(a, "d-old", "content-old", "ios", "1.4.0", "c4")
	users := []any{"c1", "c2", "c3", "c4"}
	tokens := []string{"content-android", "content-ios", "content-web", "content-old"}

	badge := true
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{
		UserIDs: users, Title: "제목 Title", Content: "본문 body",
		LinkURL: "https://example.com/deal?id=1", ImageURL: "https://cdn.example.com/img.png",
		Options: &client.Options{IsUsingBadge: &badge, RequestGroupID: "content-g1"},
	})
	if err != nil {
		t.Fatalf("push: got %v, want nil", err)
	}
	if p := e.WaitFinal(res.PushID, 10*time.Second); p.Status != "done" || p.Counts.Sent != 4 {
		t.Fatalf("push: got status %s sent %d, want done 4", p.Status, p.Counts.Sent)
	}
	var counts struct {
		Counts struct{ BadgeUnsupported, ImageUnsupported int }
	}
	e.AdminJSON("GET", "/admin/v1/pushes/"+res.PushID, nil, &counts)
	if c := counts.Counts; c.BadgeUnsupported != 1 || c.ImageUnsupported != 1 {
		t.Fatalf("history of the 1.4.0 device: got %+v, want it counted once for badge and image", c)
	}
	for _, tok := range tokens {
		t.Run("Full/"+tok, func(t *testing.T) {
			m := e.onlyMessage(tok)
			wantAt(t, m, tok, "token")
			wantAt(t, m, "제목 Title", "notification", "title")
			wantAt(t, m, "본문 body", "notification", "body")
			wantAt(t, m, "https://cdn.example.com/img.png", "notification", "image")
			wantAt(t, m, "https://cdn.example.com/img.png", "android", "notification", "image")
			wantAt(t, m, "https://cdn.example.com/img.png", "apns", "fcm_options", "image")
			wantAt(t, m, 1, "apns", "payload", "aps", "mutable-content")
			wantAt(t, m, 1, "apns", "payload", "aps", "badge")
			wantAt(t, m, "https://example.com/deal?id=1", "data", "linkURL")
			wantAt(t, m, "https://example.com/deal?id=1", "webpush", "fcm_options", "link")
			wantAt(t, m, res.PushID, "data", "pushId")
		})
	}

	t.Run("HTTPLinkNoImageNoBadge", func(t *testing.T) {
		e.Emulator.Reset()
		res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{
			UserIDs: []any{"c1"}, Title: "t", Content: "c", LinkURL: "http://example.com/plain",
		})
		if err != nil {
			t.Fatalf("push: got %v, want nil", err)
		}
		e.WaitFinal(res.PushID, 10*time.Second)
		m := e.onlyMessage("content-android")
		wantAt(t, m, "http://example.com/plain", "data", "linkURL")
		wantAt(t, m, res.PushID, "data", "pushId")
		wantAt(t, m, nil, "webpush", "fcm_options")
		wantAt(t, m, nil, "notification", "image")
		wantAt(t, m, nil, "android", "notification", "image")
		wantAt(t, m, nil, "apns", "payload", "aps", "badge")
		wantAt(t, m, nil, "apns", "fcm_options")
	})

	t.Run("BadgeFalse", func(t *testing.T) {
		e.Emulator.Reset()
		off := false
		res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{
			UserIDs: []any{"c2"}, Title: "t", Content: "c", Options: &client.Options{IsUsingBadge: &off},
		})
		if err != nil {
			t.Fatalf("push: got %v, want nil", err)
		}
		e.WaitFinal(res.PushID, 10*time.Second)
		m := e.onlyMessage("content-ios")
		wantAt(t, m, nil, "apns", "payload", "aps", "badge")
		wantAt(t, m, nil, "data", "linkURL")
		wantAt(t, m, res.PushID, "data", "pushId")
	})
}

func TestPushContentMessages(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	e.Device(a, "d1", "msg-1", "android", "1.6.0", "m1")
	e.Device(a, "d2", "msg-2", "ios", "1.6.0", 2)
	e.Device(a, "d3", "msg-3", "web", "1.6.0", "m3")

	badge := true
	res, err := a.Client.PushMessages(context.Background(), client.PushMessagesRequest{
		Messages: []client.Message{
			{UserID: "m1", Title: "For one", Content: "Body one", LinkURL: "https://one.example/x", ImageURL: "https://one.example/i.jpg"},
			{UserID: 2, Title: "For two", Content: "Body two"},
			{UserID: "m3", Title: "For three", Content: "Body three", LinkURL: "myapp://deep/link"},
		},
		Options: &client.Options{IsUsingBadge: &badge},
	})
	if err != nil {
		t.Fatalf("push: got %v, want nil", err)
	}
	if res.Message != "Push has been requested to be sent." {
		t.Errorf("answer: got %q, want the spec's string", res.Message)
	}
	p := e.WaitFinal(res.PushID, 10*time.Second)
	if p.Status != "done" || p.Kind != "messages" || p.Counts.Sent != 3 || !p.IsUsingBadge {
		t.Errorf("push: got status %s kind %s sent %d badge %v, want done messages 3 true", p.Status, p.Kind, p.Counts.Sent, p.IsUsingBadge)
	}

	t.Run("FirstOwnContent", func(t *testing.T) {
		m := e.onlyMessage("msg-1")
		wantAt(t, m, "For one", "notification", "title")
		wantAt(t, m, "Body one", "notification", "body")
		wantAt(t, m, "https://one.example/i.jpg", "notification", "image")
		wantAt(t, m, "https://one.example/i.jpg", "android", "notification", "image")
		wantAt(t, m, "https://one.example/i.jpg", "apns", "fcm_options", "image")
		wantAt(t, m, 1, "apns", "payload", "aps", "mutable-content")
		wantAt(t, m, 1, "apns", "payload", "aps", "badge")
		wantAt(t, m, "https://one.example/x", "data", "linkURL")
		wantAt(t, m, "https://one.example/x", "webpush", "fcm_options", "link")
		wantAt(t, m, res.PushID, "data", "pushId")
	})
	t.Run("SecondNoLinkNoImage", func(t *testing.T) {
		m := e.onlyMessage("msg-2")
		wantAt(t, m, "For two", "notification", "title")
		wantAt(t, m, "Body two", "notification", "body")
		wantAt(t, m, nil, "notification", "image")
		wantAt(t, m, nil, "android", "notification", "image")
		wantAt(t, m, nil, "apns", "fcm_options")
		wantAt(t, m, nil, "apns", "payload", "aps", "mutable-content")
		wantAt(t, m, 1, "apns", "payload", "aps", "badge")
		wantAt(t, m, nil, "data", "linkURL")
		wantAt(t, m, nil, "webpush", "fcm_options")
		wantAt(t, m, res.PushID, "data", "pushId")
		wantAt(t, m, res.PushID+"-1", "android", "notification", "tag")
		wantAt(t, m, res.PushID+"-1", "apns", "headers", "apns-collapse-id")
		wantAt(t, m, res.PushID+"-1", "webpush", "headers", "Topic")
	})
	t.Run("ThirdNonHTTPSLink", func(t *testing.T) {
		m := e.onlyMessage("msg-3")
		wantAt(t, m, "For three", "notification", "title")
		wantAt(t, m, "myapp://deep/link", "data", "linkURL")
		wantAt(t, m, nil, "webpush", "fcm_options")
		wantAt(t, m, res.PushID, "data", "pushId")
	})
}
