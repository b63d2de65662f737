package fcm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync/atomic"
	"unicode/utf8"

	"github.com/heraldpush/herald"
)

// ForApp returns the sender of one app's notifications with its
// service-account file (cached under appKey). The file is hashed here,
// once, not at each send: a send job's run takes one sender for all its
// sends, and the file must not change while it is in use.
func (c *Client) ForApp(appKey string, serviceAccount []byte) herald.AppSender {
	return &App{c: c, ck: newCredKey(Credentials{Key: appKey, JSON: serviceAccount})}
}

// App sends one app's notifications: Herald's view of Send. Each message
// is encoded once per shape (a push's content with its title and body left
// out) and the token, title and body spliced into it, so the sends of a
// push differ only there, even when each recipient has a message of its
// own (/messages).
type App struct {
	c    *Client
	ck   credKey
	last atomic.Pointer[template]
}

// Deliver sends one notification. With n.ValidateOnly FCM only checks it
// (validate_only). Errors are *herald.SendError.
func (a *App) Deliver(ctx context.Context, n herald.Notification) error {
	t := a.last.Load()
	if shape := shapeOf(n); t == nil || t.shape != shape {
		var err error
		if t, err = newTemplate(shape); errors.Is(err, errMarks) {
			return a.deliverEncoded(ctx, n) // another part of it is a mark's text
		} else if err != nil {
			return &herald.SendError{Class: herald.SendRejected, Message: err.Error(), Err: err}
		}
		a.last.Store(t)
	}
	return a.c.sendBody(ctx, a.ck, t.body(n))
}

// deliverEncoded sends n encoded as a whole, without a template.
func (a *App) deliverEncoded(ctx context.Context, n herald.Notification) error {
	body, err := json.Marshal(sendRequest{ValidateOnly: n.ValidateOnly, Message: BuildMessage(n.Token, notificationOf(n))})
	if err != nil {
		return &herald.SendError{Class: herald.SendRejected, Message: err.Error(), Err: err}
	}
	return a.c.sendBody(ctx, a.ck, body)
}

// notificationOf is n as BuildMessage takes it.
func notificationOf(n herald.Notification) Notification {
	return Notification{Title: n.Title, Body: n.Body, ImageURL: n.ImageURL, LinkURL: n.LinkURL, PushID: n.PushID,
		Badge: n.Badge, RequestGroupID: n.RequestGroupID, Tag: n.Tag, HasTTL: n.HasTTL, TTL: n.TTL, Expires: n.Expires, High: n.High}
}

// Authorize makes sure an access token for the app is at hand: Herald's
// view of Client.Authorize. Errors are *herald.SendError.
func (a *App) Authorize(ctx context.Context) error {
	_, _, err := a.c.authorization(ctx, a.ck)
	return err
}

// Deliver sends one notification with an app's service-account file,
// cached under appKey; see App.Deliver.
func (c *Client) Deliver(ctx context.Context, appKey string, serviceAccount []byte, n herald.Notification) error {
	return c.ForApp(appKey, serviceAccount).Deliver(ctx, n)
}

// AuthorizeApp makes sure an access token for the app is at hand; see
// App.Authorize.
func (c *Client) AuthorizeApp(ctx context.Context, appKey string, serviceAccount []byte) error {
	return c.ForApp(appKey, serviceAccount).Authorize(ctx)
}

// The marks stand in for the token, title, body and tag while a template
// is encoded; each is found as a whole JSON string, which no other part of
// a real message is (see errMarks for one that is).
const (
	tokenMark = "\x00herald-token\x00"
	titleMark = "\x00herald-title\x00"
	bodyMark  = "\x00herald-body\x00"
	tagMark   = "\x00herald-tag\x00"
)

// shapeOf is n's shape: its content with the token left out and its title,
// body and tag, when present, as their marks. Whether each is present
// shapes the message (an empty one is omitted), what each says does not; a
// tag that is no APNs collapse id or web-push Topic (see collapses) is
// part of the shape, and so is the time to live with its end (Expires, a
// second's: a push with one makes a new template at most once a second).
func shapeOf(n herald.Notification) herald.Notification {
	n.Token = ""
	if n.Title != "" {
		n.Title = titleMark
	}
	if n.Body != "" {
		n.Body = bodyMark
	}
	if n.Tag != "" && collapses(n.Tag) {
		n.Tag = tagMark
	}
	return n
}

// template is the body of a messages:send request with the token, title,
// body and tag left out: a send's body is parts[0], the first hole's text
// as a JSON string, parts[1], and so on.
type template struct {
	shape herald.Notification
	parts [][]byte
	holes []hole
}

// hole is a place in a template for one of a notification's texts.
type hole int

// The holes of a template.
const (
	holeToken hole = iota
	holeTitle
	holeBody
	holeTag
)

// mark is the text that stands in for h while a template is encoded.
func (h hole) mark() string {
	switch h {
	case holeTitle:
		return titleMark
	case holeBody:
		return bodyMark
	case holeTag:
		return tagMark
	}
	return tokenMark
}

// count is how many times the message carries h's text: a tag three times
// (the Android tag, the APNs collapse id and the web-push Topic), the
// others once.
func (h hole) count() int {
	if h == holeTag {
		return 3
	}
	return 1
}

// text is the text of n that fills h.
func (h hole) text(n herald.Notification) string {
	switch h {
	case holeTitle:
		return n.Title
	case holeBody:
		return n.Body
	case holeTag:
		return n.Tag
	}
	return n.Token
}

// errMarks is a message in which the marks cannot tell the texts' places:
// another of its parts (a link, say) is a mark's text. Deliver encodes
// such a message whole.
var errMarks = errors.New("fcm: a text's place was not found once in the message")

// newTemplate encodes the message of a notification of shape (see
// shapeOf) and cuts it at its marks.
func newTemplate(shape herald.Notification) (*template, error) {
	body, err := json.Marshal(sendRequest{ValidateOnly: shape.ValidateOnly, Message: BuildMessage(tokenMark, notificationOf(shape))})
	if err != nil {
		return nil, err
	}
	kinds := []hole{holeToken}
	if shape.Title != "" {
		kinds = append(kinds, holeTitle)
	}
	if shape.Body != "" {
		kinds = append(kinds, holeBody)
	}
	if shape.Tag == tagMark {
		kinds = append(kinds, holeTag)
	}
	type place struct {
		at int
		h  hole
	}
	var places []place
	for _, h := range kinds {
		quoted := appendJSONString(nil, h.mark())
		if bytes.Count(body, quoted) != h.count() {
			return nil, errMarks
		}
		for from := 0; ; {
			i := bytes.Index(body[from:], quoted)
			if i < 0 {
				break
			}
			places = append(places, place{from + i, h})
			from += i + len(quoted)
		}
	}
	slices.SortFunc(places, func(a, b place) int { return a.at - b.at })
	t := &template{shape: shape}
	from := 0
	for _, p := range places {
		t.parts = append(t.parts, body[from:p.at])
		t.holes = append(t.holes, p.h)
		from = p.at + len(appendJSONString(nil, p.h.mark()))
	}
	t.parts = append(t.parts, body[from:])
	return t, nil
}

// body returns the request body of n: the bytes json.Marshal gives.
func (t *template) body(n herald.Notification) []byte {
	size := len(t.parts[len(t.parts)-1])
	for i, h := range t.holes {
		size += len(t.parts[i]) + len(h.text(n)) + 2
	}
	b := make([]byte, 0, size+16) // a few escapes without growing
	for i, h := range t.holes {
		b = append(b, t.parts[i]...)
		b = appendJSONString(b, h.text(n))
	}
	return append(b, t.parts[len(t.parts)-1]...)
}

// hexDigits are the digits of a \u escape.
const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string exactly as encoding/json
// writes it: with <, > and & escaped for HTML, the control characters as
// \b \f \n \r \t or \u00XX, invalid UTF-8 as \ufffd, and U+2028 and U+2029
// escaped (JSONP).
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
