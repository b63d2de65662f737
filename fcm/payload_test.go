package fcm_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/fcm"
	"github.com/heraldpush/herald/fcm/emulator"
)

// notificationOf maps Herald content onto the notification Deliver sends.
func notificationOf(c herald.Content, pushID string) fcm.Notification {
	return fcm.Notification{Title: c.Title, Body: c.Content, ImageURL: c.ImageURL, LinkURL: c.LinkURL, PushID: pushID, Badge: true}
}

// The size Herald checks at accept (Content.FCMPayloadSize) is the size of
// the message BuildMessage makes, counted by the rule the emulator applies.
func TestBuildMessagePayloadSize(t *testing.T) {
	t.Parallel()
	pushID := herald.NewID("push_", time.Now())
	tests := []herald.Content{
		{Title: "Hi", Content: "Yo"},
		{Title: "가나", Content: "😀", LinkURL: "https://example.com/x", ImageURL: "https://img.example/a.png"},
		{Title: "t", Content: "c", LinkURL: "myapp://open/1"},
		{Title: strings.Repeat("a", 3996), Content: "b"},
	}
	for _, c := range tests {
		raw, err := json.Marshal(fcm.BuildMessage("tok", notificationOf(c, pushID)))
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		var sent struct {
			Notification map[string]string `json:"notification"`
			Data         map[string]string `json:"data"`
		}
		if err := json.Unmarshal(raw, &sent); err != nil {
			t.Fatalf("unmarshal %s: %v", raw, err)
		}
		if got, want := herald.FCMPayloadSize(sent.Notification, sent.Data), c.FCMPayloadSize(); got != want {
			t.Errorf("%.40q: message counts %d bytes, Content.FCMPayloadSize %d", c.Title, got, want)
		}
	}
}

// An oversized message is refused by FCM (the emulator) as an invalid
// message, never as a dead token: the token must survive it.
func TestSendOversized(t *testing.T) {
	t.Parallel()
	b := setup(t, "proj-size", emulator.Options{}, fcm.ClientOptions{})
	pushID := herald.NewID("push_", time.Now())
	tests := []struct {
		name, token string
		content     herald.Content
		want        herald.SendClass
	}{
		{"AtLimit", "size-at", herald.Content{Title: strings.Repeat("a", 3996), Content: "b"}, ""},
		{"OverLimit", "size-over", herald.Content{Title: strings.Repeat("a", 3997), Content: "b"}, herald.SendRejected},
	}
	for _, tt := range tests {
		if size := tt.content.FCMPayloadSize(); (size > herald.MaxFCMPayload) != (tt.want != "") {
			t.Fatalf("%s: size %d does not match the case", tt.name, size)
		}
		err := b.client.Send(t.Context(), b.cred, fcm.BuildMessage(tt.token, notificationOf(tt.content, pushID)))
		if got := classOf(t, err); got != tt.want {
			t.Errorf("%s: got class %q (%v), want %q", tt.name, got, err, tt.want)
		}
	}
}
