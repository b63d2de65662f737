package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/identity"
	"github.com/heraldpush/herald/web"
)

// pushJSON is the admin shape of a push.
type pushJSON struct {
	PushID string          `json:"pushId"`
	AppID  string          `json:"appId"`
	Kind   herald.PushKind `json:"kind"`
	Topic  *string         `json:"topic,omitempty"`
	// Filter and SegmentID are a segment push's (DESIGN 13).
	Filter    json.RawMessage `json:"filter,omitempty"`
	SegmentID *string         `json:"segmentId,omitempty"`
	// Localized are the push's entries by language, as the request gave
	// them (absent for none).
	Localized      map[string]localizedJSON `json:"localized,omitempty"`
	RequestGroupID *string                  `json:"requestGroupId"`
	Status         herald.PushStatus        `json:"status"`
	FailureReason  string                   `json:"failureReason,omitempty"`
	Marketing      bool                     `json:"marketing"`
	// MarketingRule is the rule that made the push marketing:
	// "isMarketing" (options.isMarketing) or "adPrefix" (a title starting
	// with "(광고)"); null when it is not.
	MarketingRule *string    `json:"marketingRule"`
	ScheduledAt   *time.Time `json:"scheduledAt"`
	CreatedAt     time.Time  `json:"createdAt"`
	StartedAt     *time.Time `json:"startedAt"`
	FinishedAt    *time.Time `json:"finishedAt"`
	// Title and Content are null once the push expired.
	Title   *string `json:"title"`
	Content *string `json:"content"`
	// Expired says retention cleared the push's body and the rows its
	// send left (DESIGN section 12): its counts stay.
	Expired       bool          `json:"expired"`
	LinkURL       *string       `json:"linkURL"`
	ImageURL      *string       `json:"imageURL"`
	IsUsingBadge  bool          `json:"isUsingBadge"`
	ServerActions float64       `json:"serverActions"`
	Counts        herald.Counts `json:"counts"`
	Edits         []herald.Edit `json:"edits"`
	// NightPolicy is options.nightPolicy ("skip" or "defer").
	NightPolicy herald.NightPolicy `json:"nightPolicy"`
	// DeferredUntil is when the push's deferred part is sent, while
	// counts.deferredNight tokens wait for it; null otherwise.
	DeferredUntil *time.Time `json:"deferredUntil"`
	// AdFooter is the text appended to the body of each marketing message
	// (content stays as sent); null when none.
	AdFooter *string `json:"adFooter"`
	// TTL is options.ttl in seconds; null when the push gave none.
	TTL *int `json:"ttl"`
	// Priority is options.priority ("normal" or "high").
	Priority herald.Priority `json:"priority"`
	// SpreadMinutes is options.spreadMinutes; null when the push is not
	// spread. SpreadUntil is when its last user is due, once it started;
	// null before and for a push not spread.
	SpreadMinutes *int       `json:"spreadMinutes"`
	SpreadUntil   *time.Time `json:"spreadUntil"`
	// Approvals are the steps of its approval, the request first; [] for
	// a push that did not wait for one. ApprovalExpiresAt is when one
	// awaiting approval lapses; null otherwise.
	Approvals         []approvalJSONEntry `json:"approvals"`
	ApprovalExpiresAt *time.Time          `json:"approvalExpiresAt"`
	// LocalTime is options.localTime: each device is sent when its own
	// zone's clock reads LocalWallTime (scheduleTime as written,
	// YYYY-MM-DDTHH:MM; null for another push), scheduledAt being when
	// the first zone (UTC+14) reaches it. NextLocalAt is when its next
	// zone part is sent, while one waits; null otherwise.
	LocalTime     bool       `json:"localTime"`
	LocalWallTime *string    `json:"localWallTime"`
	NextLocalAt   *time.Time `json:"nextLocalAt"`
}

// approvalJSONEntry is one step of a push's approval: by is null for the
// request of a push the Server API made, reason when none was given.
type approvalJSONEntry struct {
	Action herald.ApprovalAction `json:"action"`
	By     *string               `json:"by"`
	At     time.Time             `json:"at"`
	Reason *string               `json:"reason"`
}

// approvalsOf is a push's approval steps as the admin API shows them.
func approvalsOf(p herald.Push) ([]approvalJSONEntry, *time.Time) {
	out := make([]approvalJSONEntry, len(p.Approvals))
	for i, a := range p.Approvals {
		out[i] = approvalJSONEntry{Action: a.Action, By: orNil(a.By), At: a.At, Reason: orNil(a.Reason)}
	}
	if p.Status != herald.StatusAwaitingApproval {
		return out, nil
	}
	deadline := p.ApprovalDeadline()
	return out, &deadline
}

func orNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// pushToJSON is the push as the admin API shows it, its content as sent:
// a re-confirmation's templates rendered with its app's values
// (herald.App.ShownContent), as its devices got them.
func pushToJSON(a herald.App, p herald.Push) pushJSON {
	p.Content = a.ShownContent(p)
	edits := p.Edits
	if edits == nil {
		edits = []herald.Edit{}
	}
	out := pushJSON{
		PushID: p.ID, AppID: p.AppID, Kind: p.Kind, Topic: orNil(p.Topic), Filter: p.Filter, SegmentID: orNil(p.SegmentID), Localized: localizedOf(p.Localized), RequestGroupID: orNil(p.RequestGroupID), Status: p.Status,
		FailureReason: p.FailureReason, Marketing: p.Marketing, MarketingRule: orNil(p.MarketingRule()), ScheduledAt: p.ScheduledAt, CreatedAt: p.CreatedAt,
		StartedAt: p.StartedAt, FinishedAt: p.FinishedAt, Title: &p.Content.Title, Content: &p.Content.Content, Expired: p.ExpiredAt != nil,
		LinkURL: orNil(p.Content.LinkURL), ImageURL: orNil(p.Content.ImageURL), IsUsingBadge: p.Badge,
		ServerActions: herald.ServerActions(p.NetServerActionsHalf()), Counts: p.Counts, Edits: edits,
		NightPolicy: p.NightPolicy, DeferredUntil: p.DeferredUntil,
		AdFooter: p.AdFooterShown(), TTL: p.TTL, Priority: p.Priority, LocalTime: p.LocalTime, NextLocalAt: p.NextLocalAt,
	}
	if p.LocalTime {
		out.LocalWallTime = orNil(p.LocalWall().Format(herald.ScheduleLayout))
	}
	if out.Priority == "" {
		out.Priority = herald.PriorityNormal
	}
	if p.Spread() {
		out.SpreadMinutes = &p.SpreadMinutes
	}
	if end := p.SpreadEnd(); !end.IsZero() {
		out.SpreadUntil = &end
	}
	out.Approvals, out.ApprovalExpiresAt = approvalsOf(p)
	if out.NightPolicy == "" {
		out.NightPolicy = herald.NightSkip
	}
	if out.Expired {
		out.Title, out.Content = nil, nil
	}
	return out
}

func (s *server) listPushes(w http.ResponseWriter, r *http.Request) {
	s.pushPage(w, r, false)
}

func (s *server) listScheduled(w http.ResponseWriter, r *http.Request) {
	s.pushPage(w, r, true)
}

func (s *server) pushPage(w http.ResponseWriter, r *http.Request, scheduled bool) {
	a, ok := s.app(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	f := herald.PushFilter{RequestGroupID: q.Get("requestGroupId"), Status: herald.PushStatus(q.Get("status")),
		Scheduled: scheduled, Cursor: q.Get("cursor"), Limit: 50}
	if f.Status != "" && !f.Status.Valid() {
		web.Error(w, r, herald.Invalid(herald.Detail{Field: "status", Reason: herald.ReasonPushStatus}))
		return
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 200 {
			web.Error(w, r, herald.Invalid(herald.Detail{Field: "limit", Reason: "must be an integer from 1 to 200"}))
			return
		}
		f.Limit = n
	}
	ps, next, err := s.Store.Pushes(r.Context(), r.PathValue("appId"), f)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := make([]pushJSON, len(ps))
	for i, p := range ps {
		out[i] = pushToJSON(a, p)
	}
	web.JSON(w, http.StatusOK, map[string]any{"pushes": out, "nextCursor": orNil(next)})
}

func (s *server) getPush(w http.ResponseWriter, r *http.Request) {
	p, err := s.guard.PushOf(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	access.NoteOf(r.Context()).About(p.AppID, "")
	a, err := s.shownApp(r.Context(), p)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	var unreachable []herald.Unreachable
	var failures []herald.Failure
	var messages []messageJSON
	if !identity.SeesUsers(identity.RequestOperator(r)) { // a viewer's answer: null per-user rows
		web.JSON(w, http.StatusOK, pushDetail{pushToJSON(a, p), unreachable, failures, messages})
		return
	}
	if p.ExpiredAt != nil { // its rows are gone, or going
		web.JSON(w, http.StatusOK, pushDetail{pushToJSON(a, p), []herald.Unreachable{}, []herald.Failure{}, messages})
		return
	}
	id := p.ID
	if unreachable, err = s.Store.UnreachableUsersOf(r.Context(), id); err != nil {
		web.Error(w, r, err)
		return
	}
	if failures, err = s.Store.Failures(r.Context(), id); err != nil {
		web.Error(w, r, err)
		return
	}
	if p.Rule().PerRecipient {
		rs, err := s.Store.Recipients(r.Context(), id)
		if err != nil {
			web.Error(w, r, err)
			return
		}
		messages = messagesToJSON(p, rs)
	}
	access.NoteOf(r.Context()).PushRows(unreachable, failures, messagesUsers(messages))
	web.JSON(w, http.StatusOK, pushDetail{pushToJSON(a, p), unreachable, failures, messages})
}

// shownApp is what pushToJSON needs of p's app: the app itself for a push
// whose content is its app's templates, nothing for any other.
func (s *server) shownApp(ctx context.Context, p herald.Push) (herald.App, error) {
	if !p.Rule().Templated {
		return herald.App{}, nil
	}
	return s.Store.App(ctx, p.AppID)
}

// pushDetail is the answer of GET /admin/v1/pushes/{pushId}: the push with
// its per-user rows, which are null in a viewer's answer and empty once
// the push expired.
type pushDetail struct {
	pushJSON
	UnreachableUsers []herald.Unreachable `json:"unreachableUsers"`
	Failures         []herald.Failure     `json:"failures"`
	// Messages are the per-user messages of a push whose recipients
	// each have content of their own (/messages, re-confirmation
	// notices); null for the others, whose title and content are
	// everyone's, and for an expired push.
	Messages []messageJSON `json:"messages"`
}

// messageJSON is one user's message of a push with per-user content.
type messageJSON struct {
	UserID   string  `json:"userId"`
	Title    string  `json:"title"`
	Content  string  `json:"content"`
	LinkURL  *string `json:"linkURL"`
	ImageURL *string `json:"imageURL"`
}

// messagesToJSON lists each recipient's message, in the order stored; a
// recipient without content of its own shows the push's.
func messagesToJSON(p herald.Push, rs []herald.Recipient) []messageJSON {
	out := make([]messageJSON, len(rs))
	for i, rc := range rs {
		c := p.ContentFor(rc)
		out[i] = messageJSON{UserID: rc.UserID, Title: c.Title, Content: c.Content, LinkURL: orNil(c.LinkURL), ImageURL: orNil(c.ImageURL)}
	}
	return out
}

func (s *server) getPushGroup(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.app(w, r); !ok {
		return
	}
	group := r.PathValue("requestGroupId")
	ps, err := s.Store.PushGroup(r.Context(), r.PathValue("appId"), group)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if len(ps) == 0 {
		web.Error(w, r, herald.ErrNotFound)
		return
	}
	ids := make([]string, len(ps))
	var counts herald.Counts
	var half int64
	for i, p := range ps {
		ids[i] = p.ID
		counts.Add(p.Counts)
		half += p.NetServerActionsHalf()
	}
	web.JSON(w, http.StatusOK, map[string]any{
		"appId": r.PathValue("appId"), "requestGroupId": group, "pushIds": ids,
		"serverActions": herald.ServerActions(half), "counts": counts,
	})
}

// usageRange reads the from..to days of a usage query: this month so far in
// the app's time zone by default.
func (s *server) usageRange(a herald.App, q url.Values) (from, to string, err error) {
	today := s.Now().In(a.Location()).Format(time.DateOnly)
	from, to = q.Get("from"), q.Get("to")
	if from == "" {
		from = today[:8] + "01"
	}
	if to == "" {
		to = today
	}
	var details []herald.Detail
	for _, f := range []struct{ field, v string }{{"from", from}, {"to", to}} {
		if _, err := time.Parse(time.DateOnly, f.v); err != nil {
			details = append(details, herald.Detail{Field: f.field, Reason: "must be a date YYYY-MM-DD"})
		}
	}
	if len(details) == 0 && from > to {
		details = append(details, herald.Detail{Field: "from", Reason: "must not be after to"})
	}
	if len(details) > 0 {
		return from, to, herald.Invalid(details...)
	}
	return from, to, nil
}

func (s *server) getUsage(w http.ResponseWriter, r *http.Request) {
	a, ok := s.app(w, r)
	if !ok {
		return
	}
	from, to, err := s.usageRange(a, r.URL.Query())
	if err != nil {
		web.Error(w, r, err)
		return
	}
	days, err := s.Store.Usage(r.Context(), a.ID, from, to)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	type day struct {
		Date          string  `json:"date"`
		ServerActions float64 `json:"serverActions"`
	}
	out := make([]day, len(days))
	var total int64
	for i, d := range days {
		out[i] = day{d.Date, herald.ServerActions(d.Half)}
		total += d.Half
	}
	web.JSON(w, http.StatusOK, map[string]any{"appId": a.ID, "from": from, "to": to,
		"totalServerActions": herald.ServerActions(total), "days": out})
}

// messagesUsers lists the users of per-user messages.
func messagesUsers(ms []messageJSON) []string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.UserID
	}
	return ids
}

// localizedJSON is one entry of a push's languages.
type localizedJSON struct {
	Title   string `json:"title"`
	Content string `json:"content"`
}

// localizedOf is a push's entries by language; nil for none.
func localizedOf(l []herald.LocalizedEntry) map[string]localizedJSON {
	if len(l) == 0 {
		return nil
	}
	out := make(map[string]localizedJSON, len(l))
	for _, e := range l {
		out[e.Lang] = localizedJSON{Title: e.Title, Content: e.Content}
	}
	return out
}
