package admin

import (
	"errors"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/identity"
)

// dashboardPageSize is the number of pushes on one page of a list.
const dashboardPageSize = 50

func statuses() []herald.PushStatus {
	return herald.PushStatuses
}

// appPath is the dashboard path of an app's page, or of one below it.
func appPath(appID string, rest ...string) string {
	p := "/apps/" + url.PathEscape(appID)
	for _, s := range rest {
		p += "/" + url.PathEscape(s)
	}
	return p
}

type historyData struct {
	Pushes        []herald.Push
	Group, Status string
	Statuses      []herald.PushStatus
	// NextURL continues the list after this page; "" on the last one.
	NextURL string
}

// historyPage lists an app's pushes, newest first, filtered by request
// group and status, a page at a time.
func (d *dashboard) historyPage(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	data := &historyData{Group: strings.TrimSpace(q.Get("requestGroupId")), Status: q.Get("status"), Statuses: statuses()}
	v := viewOf("Push history", a, data)
	f := herald.PushFilter{RequestGroupID: data.Group, Status: herald.PushStatus(data.Status), Cursor: q.Get("cursor"), Limit: dashboardPageSize}
	if f.Status != "" && !f.Status.Valid() {
		d.failOn(w, r, herald.Invalid(herald.Detail{Field: "status", Reason: herald.ReasonPushStatus}), "pushes", v)
		return
	}
	ps, next, err := d.Store.Pushes(r.Context(), a.ID, f)
	if err != nil {
		d.failOn(w, r, err, "pushes", v)
		return
	}
	data.Pushes = ps
	if next != "" {
		nq := url.Values{"cursor": {next}}
		if data.Group != "" {
			nq.Set("requestGroupId", data.Group)
		}
		if data.Status != "" {
			nq.Set("status", data.Status)
		}
		data.NextURL = appPath(a.ID, "pushes") + "?" + nq.Encode()
	}
	d.render(w, r, http.StatusOK, "pushes", v)
}

// appPush loads the app and the push named in the path; the push must be
// one of the app's. It writes the error page itself when either is missing.
func (d *dashboard) appPush(w http.ResponseWriter, r *http.Request) (herald.App, herald.Push, bool) {
	a, ok := d.app(w, r)
	if !ok {
		return a, herald.Push{}, false
	}
	p, err := d.Store.Push(r.Context(), r.PathValue("pushId"))
	if err == nil && p.AppID != a.ID {
		err = herald.ErrNotFound
	}
	if err != nil {
		d.fail(w, r, err)
		return a, p, false
	}
	return a, p, true
}

type pushData struct {
	Push        herald.Push
	Unreachable []herald.Unreachable
	Failures    []herald.Failure
	Editable    bool
	// Messages are the per-user messages of a /messages push.
	Messages []herald.Recipient
	Edits    []editRow
	// Users says the page shows per-user rows (messages, unreachable
	// users, failed sends) and offers the recipients export: not to a
	// viewer.
	Users bool
	// Reason and Format are the export form's, shown again when refused.
	Reason, Format string
	// Funnel draws the counts from targeted to opened, Aside beside it
	// the targeted devices not sent.
	Funnel, Aside template.HTML
}

// pushPage shows one push: content (each user's message on /messages),
// counts and their funnel, unreachable users, failed sends and the edit trail; of an
// expired push, that it expired, its counts and the trail.
func (d *dashboard) pushPage(w http.ResponseWriter, r *http.Request) {
	a, p, ok := d.appPush(w, r)
	if !ok {
		return
	}
	data, err := d.pushPageData(r, a, p)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "push", viewOf("Push "+shortID(p.ID), a, data))
}

// pushPageData reads what the push page shows of p, noting the users of
// its per-user rows in the request's access record.
func (d *dashboard) pushPageData(r *http.Request, a herald.App, p herald.Push) (*pushData, error) {
	data := &pushData{Push: p, Editable: p.CheckEditable(d.Now()) == nil, Edits: editRows(p, a.Location()),
		Users: identity.SeesUsers(identity.RequestOperator(r)), Format: formatCSV}
	data.Funnel, data.Aside = pushFunnel(p.Counts)
	if data.Users && p.ExpiredAt == nil { // an expired push's rows are gone, or going
		var err error
		if data.Unreachable, err = d.Store.UnreachableUsersOf(r.Context(), p.ID); err == nil {
			data.Failures, err = d.Store.Failures(r.Context(), p.ID)
		}
		if err == nil && p.Rule().PerRecipient {
			data.Messages, err = d.Store.Recipients(r.Context(), p.ID)
		}
		if err != nil {
			return nil, err
		}
	}
	var messaged []string
	for _, m := range data.Messages {
		messaged = append(messaged, m.UserID)
	}
	access.NoteOf(r.Context()).PushRows(data.Unreachable, data.Failures, messaged)
	return data, nil
}

// editRow is one edit of the trail as the push page shows it.
type editRow struct {
	At      time.Time
	Changes []fieldChange
	// Note says in words what a cancel of the deferred part did; "" on
	// other edits.
	Note string
}

// fieldChange is one field an edit changed. Known reports that the old
// value is known: edits recorded before old values were kept lack it when
// no earlier edit set the field.
type fieldChange struct {
	Field, From, To string
	Known           bool
}

// editRows turns a push's edit trail into rows, oldest first, with send
// times in the app's time zone.
func editRows(p herald.Push, loc *time.Location) []editRow {
	last := map[string]string{} // each field's value after the edits so far
	rows := make([]editRow, 0, len(p.Edits))
	for _, e := range p.Edits {
		row := editRow{At: e.At, Note: deferCancelNote(e.DeferredCancelled, loc)}
		for _, field := range slices.Sorted(maps.Keys(e.Changes)) {
			c := fieldChange{Field: field, To: e.Changes[field]}
			c.From, c.Known = e.From[field]
			if !c.Known {
				c.From, c.Known = last[field]
			}
			last[field] = c.To
			if field == "scheduledAt" {
				c.From, c.To = inZone(c.From, loc), inZone(c.To, loc)
			}
			row.Changes = append(row.Changes, c)
		}
		rows = append(rows, row)
	}
	return rows
}

// deferCancelNote says what cancelling a deferred part did; "" for nil.
func deferCancelNote(c *herald.DeferredCancel, loc *time.Location) string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf("Deferred part cancelled: %d tokens of %d users that were to be sent at %s count as suppressed by the night; %s Server Actions refunded.",
		c.Tokens, c.Users, when(loc, c.DeferredUntil), strconv.FormatFloat(c.RefundedServerActions, 'f', -1, 64))
}

// inZone rewrites an RFC 3339 time in loc, as the pages show times.
func inZone(v string, loc *time.Location) string {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return v
	}
	return when(loc, t)
}

type groupData struct {
	Group         string
	Pushes        []herald.Push
	Counts        herald.Counts
	ServerActions int64
}

// groupPage shows the pushes sharing a requestGroupId as one history
// entry: summed counts and Server Actions, and each push.
func (d *dashboard) groupPage(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	data := groupData{Group: r.PathValue("requestGroupId")}
	ps, err := d.Store.PushGroup(r.Context(), a.ID, data.Group)
	if err == nil && len(ps) == 0 {
		err = herald.ErrNotFound
	}
	if err != nil {
		d.fail(w, r, err)
		return
	}
	data.Pushes = ps
	for _, p := range ps {
		data.Counts.Add(p.Counts)
		data.ServerActions += p.NetServerActionsHalf()
	}
	d.render(w, r, http.StatusOK, "group", viewOf("Request group "+data.Group, a, data))
}

type userData struct {
	UserID string
	// Reason is the export form's reason, shown again when refused.
	Reason  string
	User    *herald.User
	Devices []herald.Device
	// History is the user's consent trail, oldest first.
	History []herald.ConsentRecord
	// Form is the pair the consent form shows: the user's, or what was
	// posted.
	Form consentForm
	// DueAt is when the user's marketing consent must be confirmed again;
	// nil without a clock.
	DueAt *time.Time
	// Tags is the tags form: the user's tags, or what was posted.
	Tags []tagRow
}

// userPage looks an app user up: state, consent, devices and the consent
// trail, with a form setting the pair as the operator.
func (d *dashboard) userPage(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	data := &userData{UserID: strings.TrimSpace(r.URL.Query().Get("userId"))}
	v := viewOf("Users", a, data)
	if data.UserID == "" {
		d.usersPage(w, r, a)
		return
	}
	err := d.loadUser(r, a, data)
	if errors.Is(err, herald.ErrUserNotFound) {
		v.Problem = &problem{Code: herald.ErrNotFound.Code, Message: "No user with this ID was ever registered in this app."}
		d.render(w, r, http.StatusNotFound, "user", v)
		return
	}
	if err != nil {
		d.failOn(w, r, err, "user", v)
		return
	}
	data.Form = consentForm{Marketing: data.User.Consent.Marketing, MarketingNight: data.User.Consent.MarketingNight}
	d.render(w, r, http.StatusOK, "user", v)
}

// loadUser reads the user of data.UserID, its devices, consent trail and
// tags.
func (d *dashboard) loadUser(r *http.Request, a herald.App, data *userData) error {
	u, devices, err := d.Store.User(r.Context(), a.ID, data.UserID)
	if err != nil {
		return err
	}
	if data.History, err = d.Store.ConsentHistory(r.Context(), a.ID, data.UserID); err != nil {
		return err
	}
	tags, err := d.Store.UserTags(r.Context(), a.ID, data.UserID)
	if err != nil {
		return err
	}
	data.User, data.Devices, data.Tags = &u, devices, tagRowsOf(tags)
	access.NoteOf(r.Context()).ShowedUsers(u.ID)
	if u.ConsentConfirmedAt != nil {
		due := herald.ConsentDueAt(*u.ConsentConfirmedAt, a.Location())
		data.DueAt = &due
	}
	return nil
}
