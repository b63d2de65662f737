package fcm

import (
	"encoding/json"
	"testing"

	"github.com/heraldpush/herald"
)

// TestTemplateBody: a body spliced from a push's template is byte for byte
// the one encoding the whole message gives, whatever the token holds.
func TestTemplateBody(t *testing.T) {
	t.Parallel()
	contents := []herald.Notification{
		{PushID: "push_1", Title: "Hi", Body: "There"},
		{PushID: "push_2", Title: `"quoted" <b> & \`, Body: "여보세요", ImageURL: "https://img.example/a.png",
			LinkURL: "https://example.com/x?a=1&b=2", Badge: true, ValidateOnly: true},
		{},
	}
	tokens := []string{"tok", "", "bench-token-12345:APA91b_-x", `with"quote`, "back\\slash", "<tag>&", "ctl\x01", "non-ascii-é", "bad-utf8-\xff"}
	for _, n := range contents {
		tmpl, err := newTemplate(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, token := range tokens {
			want, err := json.Marshal(sendRequest{ValidateOnly: n.ValidateOnly, Message: BuildMessage(token, Notification{
				Title: n.Title, Body: n.Body, ImageURL: n.ImageURL, LinkURL: n.LinkURL, PushID: n.PushID, Badge: n.Badge})})
			if err != nil {
				t.Fatal(err)
			}
			if token == "" {
				// An empty token is left out of the message; the template
				// always names one.
				continue
			}
			if got := tmpl.body(token); string(got) != string(want) {
				t.Errorf("token %q:\n got %s\nwant %s", token, got, want)
			}
		}
	}
}
