package fcm

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/heraldpush/herald"
)

// FuzzAppendJSONString: appendJSONString writes any string, invalid
// UTF-8 included, byte for byte as encoding/json does.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range hostileTexts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	})
}

// FuzzTemplateBody: the body a pre-encoded template splices is byte for
// byte the one encoding/json gives for the same notification, whatever
// its strings hold; and the template made for one notification splices
// another of its shape (the texts traded round) as encoding/json would.
// A template whose marks cannot be told apart (errMarks) is not used:
// Deliver encodes such a message whole.
func FuzzTemplateBody(f *testing.F) {
	for i, s := range hostileTexts {
		other := hostileTexts[(i+7)%len(hostileTexts)]
		f.Add("tok-"+s, s, other, s, "https://example.com/"+other, "", "push_1", "", i%2 == 0, i%3 == 0, i%4 == 0, 3600, int64(1_800_000_000))
	}
	f.Add("tok", "", "", "push_1-2", "", "https://img.example/a.png?x=<1>", "push_1", "group-1", true, false, true, 0, int64(0))
	f.Fuzz(func(t *testing.T, token, title, body, tag, link, image, pushID, group string, badge, validate, hasTTL bool, ttl int, expires int64) {
		if token == "" {
			t.Skip("a template always names a token") // an empty one is left out of the message
		}
		n := herald.Notification{Token: token, Title: title, Body: body, Tag: tag, LinkURL: link, ImageURL: image, PushID: pushID,
			RequestGroupID: group, Badge: badge, ValidateOnly: validate, HasTTL: hasTTL, TTL: ttl, Expires: expires}
		tmpl, err := newTemplate(shapeOf(n))
		if errors.Is(err, errMarks) {
			return
		}
		if err != nil {
			t.Fatalf("%+v: %v", n, err)
		}
		if got, want := string(tmpl.body(n)), marshalled(t, n); got != want {
			t.Fatalf("%+v:\n got %s\nwant %s", n, got, want)
		}
		traded := n
		traded.Token, traded.Title, traded.Body = title+"x", body, title
		if shapeOf(traded) != tmpl.shape {
			return
		}
		if got, want := string(tmpl.body(traded)), marshalled(t, traded); got != want {
			t.Fatalf("template of %+v for %+v:\n got %s\nwant %s", n, traded, got, want)
		}
	})
}
