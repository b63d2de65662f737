package request

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/render"
)

// pushRequest reads the body of one push endpoint into p and returns its
// recipients (none for a topic or all-users push, whose users are found at
// send time).
type pushRequest func(o Object, p *herald.PushRequest) []herald.Recipient

// pushEndpoint is how one push endpoint reads its body.
type pushEndpoint struct {
	limit           int64
	scheduleAllowed bool
	read            pushRequest
}

// pushEndpoints are the push endpoints by the kind of push they make.
var pushEndpoints = map[herald.PushKind]pushEndpoint{
	// POST /api/push/v2/users (spec 4.4).
	herald.KindUsers: {DefaultBodyLimit, true, func(o Object, p *herald.PushRequest) []herald.Recipient {
		ids := o.UserIDs("userIds")
		p.Kind, p.Content = herald.KindUsers, o.sendableContent()
		rs := make([]herald.Recipient, len(ids))
		for i, id := range ids {
			rs[i] = herald.Recipient{UserID: id}
		}
		return rs
	}},
	// POST /api/push/v2/messages (spec 4.3).
	herald.KindMessages: {herald.MaxMessagesBody, false, func(o Object, p *herald.PushRequest) []herald.Recipient {
		p.Kind = herald.KindMessages
		return o.messages("messages")
	}},
	// POST /api/push/v2/topics (spec 4.5): to the devices subscribed to a
	// topic when it is sent.
	herald.KindTopic: {DefaultBodyLimit, true, func(o Object, p *herald.PushRequest) []herald.Recipient {
		p.Kind, p.Topic, p.Content = herald.KindTopic, o.Topic("topic"), o.sendableContent()
		return nil
	}},
	// POST /api/push/v2/all (spec 4.5): to every device of the app when it
	// is sent.
	herald.KindAll: {DefaultBodyLimit, true, func(o Object, p *herald.PushRequest) []herald.Recipient {
		p.Kind, p.Content = herald.KindAll, o.sendableContent()
		return nil
	}},
	// POST /api/push/v2/segments (DESIGN 13): to the devices a filter
	// selects when it is sent, the filter given or a saved segment's.
	herald.KindSegment: {DefaultBodyLimit, true, func(o Object, p *herald.PushRequest) []herald.Recipient {
		p.Kind, p.Content = herald.KindSegment, o.sendableContent()
		p.Filter, p.SegmentID = o.audience()
		return nil
	}},
}

// audience reads a segment push's filter or segmentId, exactly one of
// them: the filter's canonical JSON, or the segment's id.
func (o Object) audience() ([]byte, string) {
	o.DropNulls("filter", "segmentId")
	raw, hasFilter := o.Raw("filter")
	_, hasSegment := o.Raw("segmentId")
	switch {
	case hasFilter && hasSegment:
		o.Fail("segmentId", "must not be given with filter: send one of them")
		return nil, ""
	case hasSegment:
		id, _ := o.Str("segmentId", true, 64)
		return nil, id
	case !hasFilter:
		o.Fail("filter", "is required (or segmentId, a saved segment's id)")
		return nil, ""
	}
	f, problems := audience.Parse(raw)
	for _, d := range problems {
		o.Fail(d.Field, d.Reason)
	}
	if problems != nil {
		return nil, ""
	}
	b, err := json.Marshal(f)
	if err != nil {
		o.Fail("filter", err.Error())
	}
	return b, ""
}

// PushLimit bounds the body of the Server API endpoint making pushes of
// kind (users, messages, topic or all); 0 for another kind.
func PushLimit(kind herald.PushKind) int64 { return pushEndpoints[kind].limit }

// ReadPush judges a push as the Server API endpoint making pushes of kind
// (users, messages, topic or all) does, for app, received at received: the
// endpoint's gate (herald.PushGate), then the body's size (PushLimit),
// validation, limits and rules ((광고) included). It returns the push ready
// to be accepted (herald.NewPush: its id, status, marketing flag and
// charge) with its recipients, or the error the endpoint answers. The
// Server API's push endpoints and the dashboard's compose page both read
// through it, so that the dashboard sends exactly what the Server API
// would.
func ReadPush(app herald.App, kind herald.PushKind, body []byte, received time.Time) (herald.Push, []herald.Recipient, error) {
	e, ok := pushEndpoints[kind]
	if !ok {
		return herald.Push{}, nil, fmt.Errorf("request: no push endpoint makes %q pushes", kind)
	}
	if err := herald.PushGate(app); err != nil {
		return herald.Push{}, nil, err
	}
	if int64(len(body)) > e.limit {
		return herald.Push{}, nil, herald.Invalid(herald.Detail{Field: "body", Reason: fmt.Sprintf("must be at most %d bytes", e.limit)})
	}
	return JudgePush(app, kind, body, received)
}

// JudgePush reads and validates the body of a push endpoint into the
// request it makes; herald.NewPush decides the push. It is ReadPush for a
// caller that checked the gate and the body's size itself: the Server
// API, which must answer both before it reads the body.
func JudgePush(app herald.App, kind herald.PushKind, body []byte, received time.Time) (herald.Push, []herald.Recipient, error) {
	e := pushEndpoints[kind]
	o, _ := Parse(body)
	var req herald.PushRequest
	req.Recipients = e.read(o, &req)
	if kind != herald.KindMessages { // a message's text is its writer's own: no templates, no languages
		o.templates(&req)
	}
	o.options(&req, app, received, e.scheduleAllowed)
	o.adPrefix(req, app)
	if err := o.Check(); err != nil {
		return herald.Push{}, nil, err
	}
	p, err := herald.NewPush(app, req, received)
	if err != nil {
		return herald.Push{}, nil, err
	}
	return p, req.Recipients, nil
}

// ttl reads options.ttl: a whole number of seconds (no fraction or
// exponent, no string) within herald.TTLProblem's range; nil when refused.
func (o Object) ttl(raw json.RawMessage) *int {
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil {
		n = -1 // a fraction, an exponent, a string or too many digits: no whole number in range either
	}
	reason := herald.TTLProblem(n)
	if reason != "" {
		o.Fail("ttl", reason)
		return nil
	}
	seconds := int(n)
	return &seconds
}

// spreadMinutes reads options.spreadMinutes: a whole number of minutes
// (no fraction or exponent, no string) within herald.SpreadProblem's
// range, on every push endpoint but /messages; 0 when refused.
func (o Object) spreadMinutes(raw json.RawMessage, kind herald.PushKind) int {
	if kind == herald.KindMessages {
		o.Fail("spreadMinutes", "is not available on this endpoint")
		return 0
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil {
		n = -1 // a fraction, an exponent, a string, a boolean or too many digits: no whole number in range either
	}
	if reason := herald.SpreadProblem(n); reason != "" {
		o.Fail("spreadMinutes", reason)
		return 0
	}
	return int(n)
}

// Topic reads a required topic name.
func (o Object) Topic(name string) string {
	t, ok := o.Str(name, true, 0)
	if ok {
		if reason := herald.TopicProblem(t); reason != "" {
			o.Fail(name, reason)
		}
	}
	return t
}

// UserIDs reads userIds: 1 to 500 strings or integers; a user named twice
// is sent and charged once.
func (o Object) UserIDs(name string) []string {
	items := o.Array(name, herald.MaxUserIDs)
	seen := make(map[string]bool, len(items))
	var ids []string
	for i, raw := range items {
		id, reason := ParseUserID(raw)
		if reason != "" {
			o.Fail(fmt.Sprintf("%s[%d]", name, i), reason)
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
func (o Object) content() herald.Content {
	o.DropNulls("linkURL", "imageURL")
	var c herald.Content
	c.Title, _ = o.Str("title", true, 0)
	c.Content, _ = o.Str("content", true, 0)
	c.LinkURL, _ = o.Str("linkURL", false, herald.MaxLinkURL)
	c.ImageURL, _ = o.Str("imageURL", false, herald.MaxImageURL)
	return c
}

// sendableContent reads the content of a push with one message, refusing
// content whose FCM payload would exceed FCM's limit (DESIGN section 6).
func (o Object) sendableContent() herald.Content {
	c := o.content()
	if d, over := c.PayloadProblem(); over {
		o.Fail(d.Field, d.Reason)
	}
	return c
}

// messages reads the 1 to 200 individually written messages; a message
// whose FCM payload would exceed FCM's limit is refused by its index.
func (o Object) messages(name string) []herald.Recipient {
	items := o.Array(name, herald.MaxMessages)
	rs := make([]herald.Recipient, 0, len(items))
	for i, raw := range items {
		field := name + "[" + strconv.Itoa(i) + "]"
		el, ok := o.Element(field, raw)
		if !ok {
			continue
		}
		id, _ := el.UserID("userId")
		c := el.content()
		if d, over := c.PayloadProblem(); over {
			o.Fail(field, d.Reason)
		}
		rs = append(rs, herald.Recipient{UserID: id, Content: &c})
	}
	return rs
}

// options reads the push options into p; scheduleTime only where allowed.
func (o Object) options(p *herald.PushRequest, app herald.App, received time.Time, scheduleAllowed bool) {
	o.DropNulls("options")
	opt, ok := o.Child("options", false)
	if !ok {
		return
	}
	opt.DropNulls("isUsingBadge", "isMarketing", "requestGroupId", "scheduleTime", "nightPolicy", "ttl", "priority", "localTime", "spreadMinutes")
	if b := opt.Boolean("isUsingBadge"); b != nil {
		p.Badge = *b
	}
	if b := opt.Boolean("isMarketing"); b != nil {
		p.IsMarketingOpt = *b
	}
	if v, ok := opt.Str("nightPolicy", false, 0); ok {
		policy, valid := herald.ParseNightPolicy(v)
		if !valid {
			opt.Fail("nightPolicy", herald.NightPolicyReason)
		}
		p.NightPolicy = policy
	}
	if raw, ok := opt.Raw("ttl"); ok {
		p.TTL = opt.ttl(raw)
	}
	if v, ok := opt.Str("priority", false, 0); ok {
		priority, valid := herald.ParsePriority(v)
		if !valid {
			opt.Fail("priority", herald.PriorityReason)
		}
		p.Priority = priority
	}
	if raw, ok := opt.Raw("spreadMinutes"); ok {
		p.SpreadMinutes = opt.spreadMinutes(raw, p.Kind)
	}
	if g, ok := opt.Str("requestGroupId", false, 0); ok {
		if reason := herald.RequestGroupIDProblem(g); reason != "" {
			opt.Fail("requestGroupId", reason)
		}
		p.RequestGroupID = g
	}
	if _, present := opt.Raw("localTime"); present && !scheduleAllowed {
		opt.Fail("localTime", "is not available on this endpoint (a local-time push is a scheduled one)")
		return
	}
	if _, present := opt.Raw("scheduleTime"); present && !scheduleAllowed {
		opt.Fail("scheduleTime", "is not available on this endpoint")
		return
	}
	local := opt.Boolean("localTime")
	if local != nil && *local {
		if _, present := opt.Raw("scheduleTime"); !present {
			opt.Fail("localTime", "needs options.scheduleTime: the wall-clock time at which each device is sent in its own time zone")
		}
	}
	if st, ok := opt.Str("scheduleTime", false, 0); ok {
		t, reason := herald.ParseScheduleTime(st, app.Location(), received) // the 60-second rule, in the app's zone
		if reason != "" {
			opt.Fail("scheduleTime", reason)
			return
		}
		if local != nil && *local {
			t, p.LocalTime = herald.LocalStart(t, app.Location()), true
		}
		p.ScheduledAt = &t
	}
}

// adPrefix refuses a push marked options.isMarketing whose title (each
// message's title, on /messages) lacks the (광고) prefix, unless the app
// turned the check off. It judges a body read without problems only, so
// that the recipients stand at their indexes.
func (o Object) adPrefix(p herald.PushRequest, app herald.App) {
	if !p.IsMarketingOpt || app.NoAdPrefixCheck || len(*o.details) > 0 {
		return
	}
	if p.Kind != herald.KindMessages {
		if d, bad := herald.AdPrefixProblem("title", p.Content.Title); bad {
			o.Fail(d.Field, d.Reason)
		}
		for _, e := range p.Localized {
			if d, bad := herald.AdPrefixProblem("localized."+e.Lang+".title", e.Title); bad {
				o.Fail(d.Field, d.Reason)
			}
		}
		return
	}
	for i, r := range p.Recipients {
		if d, bad := herald.AdPrefixProblem(fmt.Sprintf("messages[%d].title", i), r.Content.Title); bad {
			o.Fail(d.Field, d.Reason)
		}
	}
}

// templates checks the placeholders of the push's title and content
// (DESIGN 13: {{userId}}, {{tag.NAME}}, {{tag.NAME | "default"}}) and
// reads its localized entries, each within FCM's payload limit with the
// push's links.
func (o Object) templates(p *herald.PushRequest) {
	for _, d := range render.Check(p.Content.Title, "title") {
		o.Fail(d.Field, d.Reason)
	}
	for _, d := range render.Check(p.Content.Content, "content") {
		o.Fail(d.Field, d.Reason)
	}
	o.DropNulls("localized")
	raw, ok := o.Raw("localized")
	if !ok {
		return
	}
	l, problems := render.ParseLocalized(raw, "localized", 0, 0)
	for _, d := range problems {
		o.Fail(d.Field, d.Reason)
	}
	for _, e := range l.Entries() {
		c := p.Content
		c.Title, c.Content = e.Title, e.Content
		if d, over := c.PayloadProblem(); over {
			o.Fail("localized."+e.Lang+"."+d.Field, d.Reason)
		}
		p.Localized = append(p.Localized, e)
	}
}
