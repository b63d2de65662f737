package fcm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"

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
// is encoded once per content (a push's, or a message's) and the token
// spliced into it, so a push's sends differ only there.
type App struct {
	c    *Client
	ck   credKey
	last atomic.Pointer[template]
}

// Deliver sends one notification. With n.ValidateOnly FCM only checks it
// (validate_only). Errors are *herald.SendError.
func (a *App) Deliver(ctx context.Context, n herald.Notification) error {
	t := a.last.Load()
	if content := withoutToken(n); t == nil || t.content != content {
		var err error
		if t, err = newTemplate(content); err != nil {
			return &herald.SendError{Class: herald.SendRejected, Message: err.Error(), Err: err}
		}
		a.last.Store(t)
	}
	return a.c.sendBody(ctx, a.ck, t.body(n.Token))
}

// Authorize makes sure an access token for the app is at hand: Herald's
// view of Client.Authorize. Errors are *herald.SendError.
func (a *App) Authorize(ctx context.Context) error {
	_, _, err := a.c.accessToken(ctx, a.ck)
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

// withoutToken is n's content: all of it but the token.
func withoutToken(n herald.Notification) herald.Notification {
	n.Token = ""
	return n
}

// template is the body of a messages:send request with the token left
// out: a send's body is prefix, the token as a JSON string, suffix.
type template struct {
	content        herald.Notification
	prefix, suffix []byte
}

// tokenMark stands in for the token while a template is encoded; no
// message text can hold it, as JSON escapes its NUL bytes.
const tokenMark = "\x00herald-token\x00"

func newTemplate(n herald.Notification) (*template, error) {
	body, err := json.Marshal(sendRequest{ValidateOnly: n.ValidateOnly, Message: BuildMessage(tokenMark, Notification{
		Title: n.Title, Body: n.Body, ImageURL: n.ImageURL, LinkURL: n.LinkURL, PushID: n.PushID, Badge: n.Badge,
		RequestGroupID: n.RequestGroupID,
	})})
	if err != nil {
		return nil, err
	}
	mark, _ := json.Marshal(tokenMark)
	i := bytes.Index(body, mark)
	if i < 0 {
		return nil, errors.New("fcm: the token's place was not found in the message")
	}
	return &template{content: n, prefix: body[:i], suffix: body[i+len(mark):]}, nil
}

// body returns the request body for token: the bytes json.Marshal gives.
func (t *template) body(token string) []byte {
	b := make([]byte, 0, len(t.prefix)+len(token)+2+len(t.suffix))
	b = append(b, t.prefix...)
	b = appendJSONString(b, token)
	return append(b, t.suffix...)
}

// appendJSONString appends s as encoding/json writes it: printable ASCII
// other than the characters it escapes is copied, anything else left to
// json.Marshal.
func appendJSONString(b []byte, s string) []byte {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			quoted, _ := json.Marshal(s)
			return append(b, quoted...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
