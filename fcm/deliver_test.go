package fcm

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
)

// hostileTexts are titles, bodies and tokens that JSON must escape, or
// that look like the template's own marks.
var hostileTexts = []string{
	"", "Hi", `"quoted"`, `back\slash`, `\"`, `\u0000herald-title\u0000`, "<b> & </b>",
	"ctl\x00\x01\x07\x08\x09\x0a\x0b\x0c\x0d\x1b\x1f\x7f", "line\nbreak\r\n\ttab",
	"여보세요 가나다", "😀 emoji", "é combining é", "sep\u2028line\u2029para", "bad-utf8-\xff\xfe", "cut-\xe2\x80",
	"\xed\xa0\x80 surrogate", "\ufffd replacement", "\x00herald-title\x00", "\x00herald-body\x00", "\x00herald-token\x00",
	"bench-token-12345:APA91b_-x",
}

// TestAppendJSONString: appendJSONString writes a string byte for byte as
// json.Marshal does, for hostile strings and random ones.
func TestAppendJSONString(t *testing.T) {
	t.Parallel()
	texts := append([]string{}, hostileTexts...)
	rnd := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "Z", "0", " ", `"`, `\`, "<", ">", "&", "\x00", "\x1f", "\n", "\x7f", "\xff", "\xc3",
		"é", "가", "😀", "\u2028", "\u2029", "\ufffd", "/", "'"}
	for range 2000 {
		var b strings.Builder
		for range rnd.IntN(12) {
			b.WriteString(alphabet[rnd.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	for _, s := range texts {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

// marshalled is the body json.Marshal gives for n: what a template must
// splice to.
func marshalled(t *testing.T, n herald.Notification) string {
	t.Helper()
	want, err := json.Marshal(sendRequest{ValidateOnly: n.ValidateOnly, Message: BuildMessage(n.Token, Notification{
		Title: n.Title, Body: n.Body, ImageURL: n.ImageURL, LinkURL: n.LinkURL, PushID: n.PushID, Badge: n.Badge,
		RequestGroupID: n.RequestGroupID, Tag: n.Tag})})
	if err != nil {
		t.Fatal(err)
	}
	return string(want)
}

// spliced is the body the template of n's shape gives for n.
func spliced(t *testing.T, n herald.Notification) string {
	t.Helper()
	tmpl, err := newTemplate(shapeOf(n))
	if err != nil {
		t.Fatalf("%+v: %v", n, err)
	}
	return string(tmpl.body(n))
}

// TestTemplateBody: a body spliced from a template is byte for byte the
// one encoding the whole message gives, whatever the token, title, body
// and tag hold, and one template serves every message of its shape.
func TestTemplateBody(t *testing.T) {
	t.Parallel()
	shapes := []herald.Notification{
		{PushID: "push_1"},
		{PushID: "push_1", Tag: "push_1"},
		{PushID: "push_2", ImageURL: "https://img.example/a.png?x=<1>&y=\"2\"", LinkURL: "https://example.com/x?a=1&b=2",
			Badge: true, ValidateOnly: true, RequestGroupID: "group-1", Tag: "push_2-199"},
		{LinkURL: "myapp://open/\u2028", RequestGroupID: "not a label", Tag: "not a topic <&>"},
		{},
	}
	for _, shape := range shapes {
		for i, title := range hostileTexts {
			for j, body := range hostileTexts {
				token := hostileTexts[(i+j)%len(hostileTexts)]
				if token == "" {
					token = "tok" // an empty token is left out of the message; a template always names one
				}
				n := shape
				n.Token, n.Title, n.Body = token, title, body
				if got, want := spliced(t, n), marshalled(t, n); got != want {
					t.Errorf("%+v:\n got %s\nwant %s", n, got, want)
				}
			}
		}
	}
}

// TestTemplateTagIsAMark: a tag that is no Topic is part of the shape, so
// one that reads as a mark's text makes the marks ambiguous, and Deliver
// then encodes the message whole (errMarks).
func TestTemplateTagIsAMark(t *testing.T) {
	t.Parallel()
	n := herald.Notification{Token: "tok", Title: "x", Tag: titleMark}
	if _, err := newTemplate(shapeOf(n)); !errors.Is(err, errMarks) {
		t.Fatalf("got %v, want errMarks", err)
	}
}

// TestTemplatePersonal: the messages of a /messages push, each with its
// own title and body (a marketing one with its (광고) prefix and the app's
// ad footer, up to FCM's 4 KB payload), are spliced into one template,
// and each body is the one encoding the whole message gives.
func TestTemplatePersonal(t *testing.T) {
	t.Parallel()
	app := herald.App{AdSenderName: "Herald \"Inc\"", AdSenderContact: "080-000-0000 <ads@example.com>", AdOptOut: "수신거부: 설정 > 알림\\끄기"}
	footer, missing := app.AdFooter()
	if len(missing) > 0 {
		t.Fatalf("footer: %v", missing)
	}
	p := herald.Push{ID: "push_01", Kind: herald.KindMessages, AdFooter: footer, Badge: true, RequestGroupID: "rg-1"}
	contents := []herald.Content{
		{Title: herald.AdPrefix + " 세일 \"50%\" & more", Content: "오늘만\n\t<b>특가</b>\u2028끝"},
		{Title: herald.AdPrefix, Content: ""},
		{Title: "Plain", Content: "no footer: not marketing"},
		{Title: "", Content: "body only \\ \x01"},
		{Title: herald.AdPrefix + strings.Repeat("가", 1000), Content: strings.Repeat("b", 4096-3000-len(herald.AdPrefix)-len(footer)-200)},
		{Title: strings.Repeat("a", 3996), Content: "b"},
	}
	var tmpl *template
	for i, c := range contents {
		sent := p.Sent(herald.Recipient{UserID: "u", Content: &c})
		if p.MarketingFor(herald.Recipient{Content: &c}) != strings.HasSuffix(sent.Content, footer) {
			t.Fatalf("%d: the footer is not where marketing says (%q)", i, sent.Content)
		}
		if sent.FCMPayloadSize() > herald.MaxFCMPayload {
			t.Fatalf("%d: payload %d bytes, over FCM's limit", i, sent.FCMPayloadSize())
		}
		n := herald.Notification{Token: "tok-" + string(rune('a'+i)), PushID: p.ID, Title: sent.Title, Body: sent.Content,
			Badge: p.Badge, RequestGroupID: p.RequestGroupID, Tag: p.ID + "-" + strconv.Itoa(i)}
		if tmpl == nil || tmpl.shape != shapeOf(n) {
			var err error
			if tmpl, err = newTemplate(shapeOf(n)); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := string(tmpl.body(n)), marshalled(t, n); got != want {
			t.Errorf("%d:\n got %s\nwant %s", i, got, want)
		}
	}
	if a, b := shapeOf(herald.Notification{Title: "x", Body: "y", Tag: "push_01-0"}),
		shapeOf(herald.Notification{Title: "another", Body: "z", Tag: "push_01-1"}); a != b {
		t.Errorf("two messages of one push have shapes %+v and %+v; want one", a, b)
	}
}
