package fcm_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/fcm"
	"github.com/heraldpush/herald/fcm/emulator"
)

// TestDeliverPersonalMessages: the messages of one push, each with its own
// title and body (spliced into one template), reach the emulator, which
// checks FCM's schema, as exactly the message BuildMessage makes; so does
// one whose link holds the text of a template's mark, or is one (encoded whole).
func TestDeliverPersonalMessages(t *testing.T) {
	t.Parallel()
	b := setup(t, "proj-personal", emulator.Options{}, fcm.ClientOptions{})
	app := b.client.ForApp(b.cred.Key, b.cred.JSON)
	texts := []struct{ title, body string }{
		{"Hi", "There"}, {`"q" \ <b>&`, "line\nbreak\u2028가나 😀"}, {"", "body only"}, {"title only", ""},
		{herald.AdPrefix + " 세일", "50% off\n(주)Herald 080-000-0000\n수신거부: 설정"}, {"\x00herald-title\x00", "\x00herald-body\x00"},
	}
	links := []string{"https://example.com/x?a=1&b=2", "https://example.com/\x00herald-title\x00", "\x00herald-title\x00"}
	for li, link := range links {
		for i, tx := range texts {
			n := herald.Notification{Token: "tok-" + strconv.Itoa(li) + "-" + strconv.Itoa(i), PushID: "push_1", Title: tx.title,
				Body: tx.body, LinkURL: link, ImageURL: "https://img.example/a.png", Badge: true, RequestGroupID: "rg-1"}
			if err := app.Deliver(t.Context(), n); err != nil {
				t.Fatalf("%q %q: %v", tx.title, link, err)
			}
			got := b.emu.Messages(n.Token)
			want, err := json.Marshal(fcm.BuildMessage(n.Token, fcm.Notification{Title: n.Title, Body: n.Body, ImageURL: n.ImageURL,
				LinkURL: n.LinkURL, PushID: n.PushID, Badge: n.Badge, RequestGroupID: n.RequestGroupID}))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || string(got[0].Message) != string(want) {
				t.Errorf("%q %q: the emulator got %d messages %v, want one %s", tx.title, link, len(got), got, want)
			}
		}
	}
}
