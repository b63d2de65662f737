package api_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
)

// TestCollapseTags: every message Herald sends carries one tag as the
// Android notification tag, the APNs collapse id and the web-push Topic
// (DESIGN 6): the push id on a push of one message, and the push id with
// the message's index on /messages, so a resend replaces its message on
// screen while two messages to one user both show. The emulator checks
// each against FCM's rules (64 bytes, a Topic's alphabet and length).
func TestCollapseTags(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(map[string]any{"tier": "business"})
	e.Register(a, "tok-", "u1", "u2")
	ctx := context.Background()
	users, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1", "u2"}, Title: "t", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	messages, err := a.Client.PushMessages(ctx, client.PushMessagesRequest{Messages: []client.Message{
		{UserID: "u2", Title: "first", Content: "c"}, {UserID: "u1", Title: "for u1", Content: "c"},
		{UserID: "u2", Title: "second", Content: "c"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	all, err := a.Client.PushAll(ctx, client.PushAllRequest{Title: "t", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{users.PushID, messages.PushID, all.PushID} {
		e.WaitFinal(id, 10*time.Second)
	}
	want := map[string]map[string][]string{ // push → token → tags
		users.PushID:    {"tok-u1": {users.PushID}, "tok-u2": {users.PushID}},
		messages.PushID: {"tok-u1": {messages.PushID + "-1"}, "tok-u2": {messages.PushID + "-0", messages.PushID + "-2"}},
		all.PushID:      {"tok-u1": {all.PushID}, "tok-u2": {all.PushID}},
	}
	got := map[string]map[string][]string{}
	for _, token := range []string{"tok-u1", "tok-u2"} {
		for _, m := range e.Received(token) {
			var msg struct {
				Data    struct{ PushID string }
				Android struct{ Notification struct{ Tag string } }
				APNS    struct {
					Headers map[string]string
				}
				Webpush struct {
					Headers map[string]string
				}
			}
			if err := json.Unmarshal(m.Message, &msg); err != nil {
				t.Fatal(err)
			}
			tag := msg.Android.Notification.Tag
			if msg.APNS.Headers["apns-collapse-id"] != tag || msg.Webpush.Headers["Topic"] != tag {
				t.Errorf("%s: Android tag %q, APNs collapse id %q, web-push Topic %q: want one tag", token, tag,
					msg.APNS.Headers["apns-collapse-id"], msg.Webpush.Headers["Topic"])
			}
			if got[msg.Data.PushID] == nil {
				got[msg.Data.PushID] = map[string][]string{}
			}
			got[msg.Data.PushID][token] = append(got[msg.Data.PushID][token], tag)
		}
	}
	for push, tokens := range want {
		for token, tags := range tokens {
			g := got[push][token]
			if len(g) != len(tags) {
				t.Errorf("push %s to %s: tags %q, want %q", push, token, g, tags)
				continue
			}
			seen := map[string]bool{}
			for _, tag := range g {
				seen[tag] = true
			}
			for _, tag := range tags {
				if !seen[tag] {
					t.Errorf("push %s to %s: tags %q, want %q", push, token, g, tags)
				}
			}
		}
	}
	if n := len(strconv.Itoa(199)) + 1 + len(all.PushID); n > 32 {
		t.Errorf("a /messages tag takes %d characters, over a web-push Topic's 32", n)
	}
}
