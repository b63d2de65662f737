package api

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/web"
)

// Pusher accepts pushes durably (delivery.Service).
type Pusher interface {
	Accept(ctx context.Context, p herald.Push, rs []herald.Recipient, idem *herald.Idempotency) (id string, replayed bool, err error)
}

// The success bodies of spec 4.3 and 4.4, exactly (DESIGN.md section 5).
const (
	answerRequested = "Push has been requested to be sent."
	answerScheduled = "Push has been scheduled successfully."
)

// pushRequest reads the body of one push endpoint into p and returns its
// recipients (none for a topic or all-users push, whose users are found at
// send time).
type pushRequest func(o object, p *herald.PushRequest) []herald.Recipient

// pushEndpoint is how one push endpoint reads its body.
type pushEndpoint struct {
	limit           int64
	scheduleAllowed bool
	read            pushRequest
}

// pushEndpoints are the push endpoints by the kind of push they make.
var pushEndpoints = map[herald.PushKind]pushEndpoint{
	// POST /api/push/v2/users (spec 4.4).
	herald.KindUsers: {defaultBodyLimit, true, func(o object, p *herald.PushRequest) []herald.Recipient {
		ids := o.userIDs("userIds")
		p.Kind, p.Content = herald.KindUsers, o.sendableContent()
		rs := make([]herald.Recipient, len(ids))
		for i, id := range ids {
			rs[i] = herald.Recipient{UserID: id}
		}
		return rs
	}},
	// POST /api/push/v2/messages (spec 4.3).
	herald.KindMessages: {herald.MaxMessagesBody, false, func(o object, p *herald.PushRequest) []herald.Recipient {
		p.Kind = herald.KindMessages
		return o.messages("messages")
	}},
	// POST /api/push/v2/topics (spec 4.5): to the devices subscribed to a
	// topic when it is sent.
	herald.KindTopic: {defaultBodyLimit, true, func(o object, p *herald.PushRequest) []herald.Recipient {
		p.Kind, p.Topic, p.Content = herald.KindTopic, o.topic("topic"), o.sendableContent()
		return nil
	}},
	// POST /api/push/v2/all (spec 4.5): to every device of the app when it
	// is sent.
	herald.KindAll: {defaultBodyLimit, true, func(o object, p *herald.PushRequest) []herald.Recipient {
		p.Kind, p.Content = herald.KindAll, o.sendableContent()
		return nil
	}},
}

func (s *server) pushUsers(w http.ResponseWriter, r *http.Request) { s.push(w, r, herald.KindUsers) }
func (s *server) pushMessages(w http.ResponseWriter, r *http.Request) {
	s.push(w, r, herald.KindMessages)
}
func (s *server) pushTopic(w http.ResponseWriter, r *http.Request) { s.push(w, r, herald.KindTopic) }
func (s *server) pushAll(w http.ResponseWriter, r *http.Request)   { s.push(w, r, herald.KindAll) }

// push runs a push endpoint: body read within limit, an idempotent repeat
// replayed, the request read and judged, the push accepted.
func (s *server) push(w http.ResponseWriter, r *http.Request, kind herald.PushKind) {
	received := s.now()
	app := appFrom(r.Context())
	body, err := readBody(r, pushEndpoints[kind].limit)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	idem, done := s.replay(w, r, app, body, received)
	if done {
		return
	}
	p, rs, err := judgePush(app, kind, body, received)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	id, _, err := s.pushes.Accept(r.Context(), p, rs, idem)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	answer(w, id, p.ScheduledAt)
}

// ReadPush judges a push as the Server API endpoint making pushes of kind
// (users, messages, topic or all) does, for app, received at received: the
// endpoint's gate (herald.PushGate), then the body's size, validation,
// limits and rules ((광고) included). It returns the push ready to be
// accepted (herald.NewPush: its id, status, marketing flag and charge)
// with its recipients, or the error the endpoint answers. The dashboard's
// compose page sends through it, so that it sends exactly what the Server
// API would.
func ReadPush(app herald.App, kind herald.PushKind, body []byte, received time.Time) (herald.Push, []herald.Recipient, error) {
	e, ok := pushEndpoints[kind]
	if !ok {
		return herald.Push{}, nil, fmt.Errorf("api: no push endpoint makes %q pushes", kind)
	}
	if err := herald.PushGate(app); err != nil {
		return herald.Push{}, nil, err
	}
	if int64(len(body)) > e.limit {
		return herald.Push{}, nil, herald.Invalid(herald.Detail{Field: "body", Reason: fmt.Sprintf("must be at most %d bytes", e.limit)})
	}
	return judgePush(app, kind, body, received)
}

// judgePush reads and validates the body of a push endpoint into the
// request it makes; herald.NewPush decides the push (see ReadPush).
func judgePush(app herald.App, kind herald.PushKind, body []byte, received time.Time) (herald.Push, []herald.Recipient, error) {
	e := pushEndpoints[kind]
	o, _ := parseObject(body)
	var req herald.PushRequest
	req.Recipients = e.read(o, &req)
	o.options(&req, app, received, e.scheduleAllowed)
	o.adPrefix(req, app)
	if err := o.check(); err != nil {
		return herald.Push{}, nil, err
	}
	p, err := herald.NewPush(app, req, received)
	if err != nil {
		return herald.Push{}, nil, err
	}
	return p, req.Recipients, nil
}

// replay answers a repeated Idempotency-Key with the first answer (done is
// true then, or when the key itself is refused). It runs before the body is
// judged: a repeat must get the first answer even when, say, its
// scheduleTime is no longer 60 s away.
func (s *server) replay(w http.ResponseWriter, r *http.Request, app herald.App, body []byte, received time.Time) (*herald.Idempotency, bool) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		return nil, false
	}
	if utf8.RuneCountInString(key) > herald.MaxIdempotencyKey || !utf8.ValidString(key) {
		web.Error(w, r, herald.Invalid(herald.Detail{Field: "Idempotency-Key", Reason: "must be at most 255 characters"}))
		return nil, true
	}
	h := sha256.Sum256(append([]byte(r.URL.Path+"\n"), body...))
	idem := &herald.Idempotency{Key: key, Hash: h[:]}
	first, found, err := s.store.IdempotentPush(r.Context(), app.ID, *idem, received)
	if err != nil {
		web.Error(w, r, err)
		return nil, true
	}
	if !found {
		return idem, false
	}
	answer(w, first.ID, first.ScheduledAt)
	return nil, true
}

// answer writes the spec's JSON string with the X-Push-Id header; a
// scheduled push's also says, in X-Scheduled-At, the instant its
// scheduleTime was read as in the app's zone (RFC 3339, UTC).
func answer(w http.ResponseWriter, pushID string, scheduledAt *time.Time) {
	w.Header().Set("X-Push-Id", pushID)
	if scheduledAt != nil {
		w.Header().Set("X-Scheduled-At", scheduledAt.UTC().Format(time.RFC3339))
		web.JSON(w, http.StatusOK, answerScheduled)
		return
	}
	web.JSON(w, http.StatusOK, answerRequested)
}

// array reads a required array member with between 1 and max elements.
func (o object) array(name string, max int) []json.RawMessage {
	raw, ok := o.raw(name)
	if !ok {
		o.fail(name, "is required")
		return nil
	}
	items, ok := splitArray(raw)
	if !ok {
		o.fail(name, "must be an array")
		return nil
	}
	if len(items) == 0 || len(items) > max {
		o.fail(name, fmt.Sprintf("must have 1 to %d elements", max))
		return nil
	}
	return items
}

// topic reads a required topic name.
func (o object) topic(name string) string {
	t, ok := o.str(name, true, 0)
	if ok {
		if reason := herald.TopicProblem(t); reason != "" {
			o.fail(name, reason)
		}
	}
	return t
}

// userIDs reads userIds: 1 to 500 strings or integers; a user named twice
// is sent and charged once.
func (o object) userIDs(name string) []string {
	items := o.array(name, herald.MaxUserIDs)
	seen := make(map[string]bool, len(items))
	var ids []string
	for i, raw := range items {
		id, reason := herald.ParseUserID(raw)
		if reason != "" {
			o.fail(fmt.Sprintf("%s[%d]", name, i), reason)
			continue
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// content reads title, content, linkURL and imageURL.
func (o object) content() herald.Content {
	o.dropNulls("linkURL", "imageURL")
	var c herald.Content
	c.Title, _ = o.str("title", true, 0)
	c.Content, _ = o.str("content", true, 0)
	c.LinkURL, _ = o.str("linkURL", false, herald.MaxLinkURL)
	c.ImageURL, _ = o.str("imageURL", false, herald.MaxImageURL)
	return c
}

// sendableContent reads the content of a push with one message, refusing
// content whose FCM payload would exceed FCM's limit (DESIGN section 6).
func (o object) sendableContent() herald.Content {
	c := o.content()
	if d, over := c.PayloadProblem(); over {
		o.fail(d.Field, d.Reason)
	}
	return c
}

// messages reads the 1 to 200 individually written messages; a message
// whose FCM payload would exceed FCM's limit is refused by its index.
func (o object) messages(name string) []herald.Recipient {
	items := o.array(name, herald.MaxMessages)
	rs := make([]herald.Recipient, 0, len(items))
	for i, raw := range items {
		field := name + "[" + strconv.Itoa(i) + "]"
		el, ok := o.element(field, raw)
		if !ok {
			continue
		}
		id, _ := el.userID("userId")
		c := el.content()
		if d, over := c.PayloadProblem(); over {
			o.fail(field, d.Reason)
		}
		rs = append(rs, herald.Recipient{UserID: id, Content: &c})
	}
	return rs
}

// options reads the push options into p; scheduleTime only where allowed.
func (o object) options(p *herald.PushRequest, app herald.App, received time.Time, scheduleAllowed bool) {
	o.dropNulls("options")
	opt, ok := o.child("options", false)
	if !ok {
		return
	}
	opt.dropNulls("isUsingBadge", "isMarketing", "requestGroupId", "scheduleTime", "nightPolicy")
	if b := opt.boolean("isUsingBadge"); b != nil {
		p.Badge = *b
	}
	if b := opt.boolean("isMarketing"); b != nil {
		p.IsMarketingOpt = *b
	}
	if v, ok := opt.str("nightPolicy", false, 0); ok {
		policy, valid := herald.ParseNightPolicy(v)
		if !valid {
			opt.fail("nightPolicy", herald.NightPolicyReason)
		}
		p.NightPolicy = policy
	}
	if g, ok := opt.str("requestGroupId", false, 0); ok {
		if reason := herald.RequestGroupIDProblem(g); reason != "" {
			opt.fail("requestGroupId", reason)
		}
		p.RequestGroupID = g
	}
	if _, present := opt.raw("scheduleTime"); present && !scheduleAllowed {
		opt.fail("scheduleTime", "is not available on this endpoint")
		return
	}
	if st, ok := opt.str("scheduleTime", false, 0); ok {
		t, reason := herald.ParseScheduleTime(st, app.Location(), received)
		if reason != "" {
			opt.fail("scheduleTime", reason)
			return
		}
		p.ScheduledAt = &t
	}
}

// adPrefix refuses a push marked options.isMarketing whose title (each
// message's title, on /messages) lacks the (광고) prefix, unless the app
// turned the check off. It judges a body read without problems only, so
// that the recipients stand at their indexes.
func (o object) adPrefix(p herald.PushRequest, app herald.App) {
	if !p.IsMarketingOpt || app.NoAdPrefixCheck || len(*o.details) > 0 {
		return
	}
	if p.Kind != herald.KindMessages {
		if d, bad := herald.AdPrefixProblem("title", p.Content.Title); bad {
			o.fail(d.Field, d.Reason)
		}
		return
	}
	for i, r := range p.Recipients {
		if d, bad := herald.AdPrefixProblem(fmt.Sprintf("messages[%d].title", i), r.Content.Title); bad {
			o.fail(d.Field, d.Reason)
		}
	}
}
