package delivery

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/heraldpush/herald"
)

// TestCollapseTags: every message delivery sends carries one tag as the
// Android notification tag, the APNs collapse id and the web-push Topic
// (DESIGN 6): the push id on a push of one message, and the push id with
// the message's index on /messages, so a resend replaces its message on
// screen while two messages to one user both show. The emulator checks
// each against FCM's rules (64 bytes, a Topic's alphabet and length).
func TestCollapseTags(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	a := h.newApp(nil)
	h.register(a, "tok-", "u1", "u2")
	users := h.pushUsers(a, "u1", "u2")
	messages, err := h.accept(a, herald.KindMessages, map[string]any{"messages": []any{
		map[string]any{"userId": "u2", "title": "first", "content": "c"}, map[string]any{"userId": "u1", "title": "for u1", "content": "c"},
		map[string]any{"userId": "u2", "title": "second", "content": "c"},
	}})
	must(t, err)
	all, err := h.accept(a, herald.KindAll, map[string]any{"title": "t", "content": "c"})
	must(t, err)
	for _, id := range []string{users, messages, all} {
		h.final(id)
	}
	want := map[string]map[string][]string{ // push → token → tags
		users:    {"tok-u1": {users}, "tok-u2": {users}},
		messages: {"tok-u1": {messages + "-1"}, "tok-u2": {messages + "-0", messages + "-2"}},
		all:      {"tok-u1": {all}, "tok-u2": {all}},
	}
	got := map[string]map[string][]string{}
	for _, token := range []string{"tok-u1", "tok-u2"} {
		for _, m := range h.messages(token) {
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
			if err := json.Unmarshal(m.raw, &msg); err != nil {
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
	if n := len(strconv.Itoa(199)) + 1 + len(all); n > 32 {
		t.Errorf("a /messages tag takes %d characters, over a web-push Topic's 32", n)
	}
}
