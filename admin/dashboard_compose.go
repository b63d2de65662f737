package admin

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/identity"
	"github.com/heraldpush/herald/request"
	"github.com/heraldpush/herald/web"
)

// The compose page sends a real push in two steps: the form posts to a
// review that shows whom it reaches and what it costs, whose form posts it
// again with confirmed=yes to send it. Both steps judge the push with
// request.ReadPush, the Server API's own reading of the endpoint's body, so
// the dashboard sends exactly what the Server API would accept (gate,
// limits, (광고) and charge) and nothing else.

// composeForm is the compose form as shown or posted.
type composeForm struct {
	// Target is "users", "topic", "segment" or "all".
	Target                         string
	UserIDs, Topic, Title, Content string
	// SegmentID is a saved segment a segment push goes to; without it,
	// Filter is the filter's JSON (which the page's builder writes).
	SegmentID, Filter                 string
	LinkURL, ImageURL, RequestGroupID string
	IsMarketing, IsUsingBadge         bool
	// ScheduleTime is the send time in the app's zone, "YYYY-MM-DDTHH:MM"
	// (a datetime-local input's value, the Server API's format); "" sends
	// at once.
	ScheduleTime string
	// NightPolicy is options.nightPolicy: "skip" (the default, left out
	// of the request) or "defer".
	NightPolicy string
	// Priority is options.priority: "normal" (the default, left out of
	// the request) or "high", which the Server API refuses on an
	// advertising push.
	Priority string
	// LocalTime is options.localTime: each device at ScheduleTime in its
	// own zone.
	LocalTime bool
	// SpreadMinutes is options.spreadMinutes as typed ("" for none): sent
	// as a number when it is a whole one, else as typed, for the Server
	// API to refuse as it refuses any other value.
	SpreadMinutes string
	// Key makes the confirmed post idempotent: sent twice (a double click),
	// it makes one push.
	Key string
}

// composeTargets are the form's targets and the kinds of push they make.
var composeTargets = map[string]herald.PushKind{"users": herald.KindUsers, "topic": herald.KindTopic, "segment": herald.KindSegment, "all": herald.KindAll}

func composeFormOf(f url.Values) composeForm {
	text := func(k string) string { return strings.ReplaceAll(f.Get(k), "\r\n", "\n") }
	return composeForm{Target: f.Get("target"), UserIDs: text("userIds"), Topic: strings.TrimSpace(f.Get("topic")),
		SegmentID: strings.TrimSpace(f.Get("segmentId")), Filter: strings.TrimSpace(text("filter")),
		Title: text("title"), Content: text("content"), LinkURL: strings.TrimSpace(f.Get("linkURL")),
		ImageURL: strings.TrimSpace(f.Get("imageURL")), RequestGroupID: strings.TrimSpace(f.Get("requestGroupId")),
		IsMarketing: f.Get("isMarketing") == "true", IsUsingBadge: f.Get("isUsingBadge") == "true",
		ScheduleTime: strings.TrimSpace(f.Get("scheduleTime")), NightPolicy: f.Get("nightPolicy"),
		Priority: f.Get("priority"), LocalTime: f.Get("localTime") == "true", SpreadMinutes: strings.TrimSpace(f.Get("spreadMinutes")), Key: f.Get("key")}
}

// userIDList splits the user IDs typed one per line (or separated by
// commas), blank entries dropped.
func userIDList(s string) []string {
	ids := []string{}
	for _, id := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == ',' }) {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// request writes the form as the body of the Server API endpoint of its
// target: members left empty are left out, as a client would.
func (f composeForm) request() (herald.PushKind, []byte, error) {
	kind, ok := composeTargets[f.Target]
	if !ok {
		return "", nil, herald.Invalid(herald.Detail{Field: "target", Reason: "must be users, topic, segment or all"})
	}
	body := map[string]any{"title": f.Title, "content": f.Content}
	switch kind {
	case herald.KindUsers:
		body["userIds"] = userIDList(f.UserIDs)
	case herald.KindTopic:
		body["topic"] = f.Topic
	case herald.KindSegment:
		switch {
		case f.SegmentID != "":
			body["segmentId"] = f.SegmentID
		case f.Filter == "": // the Server API names the missing filter
		case !json.Valid([]byte(f.Filter)):
			return "", nil, herald.Invalid(herald.Detail{Field: "filter", Reason: "must be a filter in JSON, such as {\"tag\": \"plan\", \"eq\": \"gold\"}"})
		default:
			body["filter"] = json.RawMessage(f.Filter)
		}
	}
	opts := map[string]any{}
	for _, m := range []struct {
		dst   map[string]any
		name  string
		value string
	}{{body, "linkURL", f.LinkURL}, {body, "imageURL", f.ImageURL}, {opts, "requestGroupId", f.RequestGroupID}, {opts, "scheduleTime", f.ScheduleTime}} {
		if m.value != "" {
			m.dst[m.name] = m.value
		}
	}
	if f.IsMarketing {
		opts["isMarketing"] = true
	}
	if f.NightPolicy != "" && f.NightPolicy != string(herald.NightSkip) { // the Server API judges any other value
		opts["nightPolicy"] = f.NightPolicy
	}
	if f.Priority != "" && f.Priority != string(herald.PriorityNormal) { // the Server API judges any other value
		opts["priority"] = f.Priority
	}
	if f.SpreadMinutes != "" {
		opts["spreadMinutes"] = f.SpreadMinutes // the Server API refuses a string
		if n, err := strconv.Atoi(f.SpreadMinutes); err == nil {
			opts["spreadMinutes"] = n
		}
	}
	if f.IsUsingBadge {
		opts["isUsingBadge"] = true
	}
	if f.LocalTime {
		opts["localTime"] = true
	}
	if len(opts) > 0 {
		body["options"] = opts
	}
	b, err := json.Marshal(body)
	return kind, b, err
}

// composeData is what the compose page shows: the form, or its review.
type composeData struct {
	Form   composeForm
	Review *composeReview
	// Segments are the app's saved segments, for a segment push.
	Segments []audience.Segment
}

// composeReview is the confirmation page of a composed push.
type composeReview struct {
	Push herald.Push
	// Users is whom the push goes to: the requested users, or those a topic,
	// segment or all-users push would reach now (Unmapped of them devices
	// without a user; Devices theirs, for a segment); CostHalf what that
	// costs.
	Users, Unmapped, Devices int
	// Segment is the saved segment a segment push names.
	Segment  *audience.Segment
	CostHalf int64
	Sandbox  bool
	// Night reports that an advertising push is sent in the night window
	// (21:00–08:00 in the app's zone): now, or at its scheduled time.
	// Morning is when that night ends, when a deferred part would go.
	Night   bool
	Morning time.Time
}

func (d *dashboard) composePage(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	data := &composeData{Form: composeForm{Target: "users"}}
	v := viewOf("Compose a push", a, data)
	var err error
	if data.Segments, err = d.Store.Segments(r.Context(), a.ID); err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "compose", v)
}

// compose reviews a posted push or, confirmed, sends it.
func (d *dashboard) compose(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	data := &composeData{Form: composeFormOf(r.PostForm)}
	v := viewOf("Compose a push", a, data)
	var err error
	if data.Segments, err = d.Store.Segments(r.Context(), a.ID); err != nil {
		d.fail(w, r, err)
		return
	}
	if r.PostFormValue("edit") == "yes" { // back from the review to the form
		d.render(w, r, http.StatusOK, "compose", v)
		return
	}
	p, rs, body, err := d.readComposed(r.Context(), a, data.Form)
	if err == nil && !confirmed(r) {
		data.Review, err = d.review(r.Context(), a, p)
		if data.Form.Key == "" {
			data.Form.Key = newComposeKey()
		}
	}
	if err != nil {
		d.failOn(w, r, err, "compose", v)
		return
	}
	if data.Review != nil {
		v.Title = "Send this push?"
		d.render(w, r, http.StatusOK, "compose", v)
		return
	}
	if data.Form.Key == "" { // a confirmed post always carries the review's key; one made by hand gets its own
		data.Form.Key = newComposeKey()
	}
	p.SetComposer(identity.RequestOperator(r).ID) // whom approving it is refused to
	h := sha256.Sum256(append([]byte("dashboard compose\n"), body...))
	id, _, err := d.Delivery.Accept(r.Context(), p, rs, &herald.Idempotency{Key: "dashboard-" + data.Form.Key, Hash: h[:]})
	if err != nil {
		d.failOn(w, r, err, "compose", v)
		return
	}
	notice := "Push sent. This page shows how it goes; reload it to follow."
	switch {
	case p.Status == herald.StatusAwaitingApproval:
		notice = "Push awaiting approval: another operator approves or rejects it on the Approvals page. Nothing is sent or charged until then."
	case p.ScheduledAt != nil:
		notice = "Push scheduled for " + when(a.Location(), p.ScheduledAt) + "."
	}
	d.done(w, r, appPath(a.ID, "pushes", id), flash{AppID: a.ID, Notice: notice})
}

// readComposed judges the form as the Server API judges its body, and
// reads the filter of the segment a segment push names.
func (d *dashboard) readComposed(ctx context.Context, a herald.App, f composeForm) (herald.Push, []herald.Recipient, []byte, error) {
	kind, body, err := f.request()
	if err != nil {
		return herald.Push{}, nil, nil, err
	}
	p, rs, err := request.ReadPush(a, kind, body, d.Now())
	if err == nil && p.SegmentID != "" {
		p.Filter, err = audience.SegmentFilter(ctx, d.Store, a.ID, p.SegmentID)
	}
	return p, rs, body, err
}

// review counts whom p reaches and what it costs: its charge for requested
// users; for a topic or all-users push, charged per user found as it fans
// out, the users it would reach now.
func (d *dashboard) review(ctx context.Context, a herald.App, p herald.Push) (*composeReview, error) {
	rv := &composeReview{Push: p, Users: p.RequestedUsers, CostHalf: p.ServerActionsHalf, Sandbox: a.Sandbox}
	at := d.Now()
	if t := p.ScheduleReading(a.Location()); t != nil { // a local-time push's, as the app's zone has it
		at = *t
	}
	if p.Marketing && herald.IsNight(at, a.Location()) {
		rv.Night, rv.Morning = true, herald.NextMorning(at, a.Location())
	}
	switch {
	case p.Kind == herald.KindSegment:
		f, problems := audience.Parse(p.Filter)
		if problems != nil { // accepted filters parse; a segment's too
			return nil, herald.Invalid(problems...)
		}
		c, err := d.Store.CountAudience(ctx, a.ID, f, d.Now().UTC()) // as the live count: now
		if err != nil {
			return nil, err
		}
		rv.Users, rv.Devices = c.Users, c.Devices
		rv.CostHalf = p.Cost(rv.Users)
	case p.Rule().CountsUsers:
		users, unmapped, err := d.Store.CountTargets(ctx, a.ID, p.Topic)
		if err != nil {
			return nil, err
		}
		rv.Users, rv.Unmapped = users+unmapped, unmapped
		rv.CostHalf = p.Cost(rv.Users)
	}
	return rv, nil
}

// newComposeKey makes the idempotency key of one reviewed push.
func newComposeKey() string {
	b := make([]byte, 16)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// audienceCount is the compose page's live count (POST
// /apps/{appId}/audience/count, from its script): what the posted filter,
// or the saved segment segmentId names, selects now. It answers as the
// admin API's POST …/audience/count does, JSON either way.
func (d *dashboard) audienceCount(w http.ResponseWriter, r *http.Request) {
	a, err := d.Store.App(r.Context(), r.PathValue("appId"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	var f audience.Filter
	if id := strings.TrimSpace(r.PostFormValue("segmentId")); id != "" {
		sg, err := audience.NamedSegment(r.Context(), d.Store, a.ID, id)
		if err != nil {
			web.Error(w, r, err)
			return
		}
		f = sg.Filter
	} else {
		raw := strings.TrimSpace(r.PostFormValue("filter"))
		if !json.Valid([]byte(raw)) {
			web.Error(w, r, herald.Invalid(herald.Detail{Field: "filter", Reason: "must be a filter in JSON"}))
			return
		}
		var problems []herald.Detail
		if f, problems = audience.Parse(json.RawMessage(raw)); problems != nil {
			web.Error(w, r, herald.Invalid(problems...))
			return
		}
	}
	now := d.Now().UTC()
	c, err := d.Store.CountAudience(r.Context(), a.ID, f, now)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	web.JSON(w, http.StatusOK, countJSON{Users: c.Users, Devices: c.Devices, CountedAt: now.Truncate(time.Millisecond)})
}
