package admin

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/heraldpush/herald"
)

// dashboardPageSize is the number of pushes on one page of a list.
const dashboardPageSize = 50

func statuses() []herald.PushStatus {
	return []herald.PushStatus{herald.StatusScheduled, herald.StatusCancelled, herald.StatusSending, herald.StatusDone, herald.StatusFailed}
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
		d.failOn(w, r, herald.Invalid(herald.Detail{Field: "status", Reason: "must be scheduled, cancelled, sending, done or failed"}), "pushes", v)
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
}

// pushPage shows one push: content, counts, unreachable users, failed
// sends and the edit trail.
func (d *dashboard) pushPage(w http.ResponseWriter, r *http.Request) {
	a, p, ok := d.appPush(w, r)
	if !ok {
		return
	}
	unreachable, err := d.Store.UnreachableUsersOf(r.Context(), p.ID)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	failures, err := d.Store.Failures(r.Context(), p.ID)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	data := pushData{Push: p, Unreachable: unreachable, Failures: failures, Editable: p.CheckEditable(d.Now()) == nil}
	d.render(w, r, http.StatusOK, "push", viewOf("Push "+p.ID, a, data))
}

type usageData struct {
	From, To  string
	Days      []herald.DayUsage
	TotalHalf int64
}

// usagePage shows the Server Actions charged per day from..to (this month
// so far by default), in the app's time zone.
func (d *dashboard) usagePage(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	data := &usageData{}
	v := viewOf("Usage", a, data)
	var err error
	if data.From, data.To, err = d.usageRange(a, r.URL.Query()); err != nil {
		d.failOn(w, r, err, "usage", v)
		return
	}
	days, err := d.Store.Usage(r.Context(), a.ID, data.From, data.To)
	if err != nil {
		d.failOn(w, r, err, "usage", v)
		return
	}
	data.Days = days
	for _, day := range days {
		data.TotalHalf += day.Half
	}
	d.render(w, r, http.StatusOK, "usage", v)
}

type userData struct {
	UserID  string
	User    *herald.User
	Devices []herald.Device
}

// userPage looks an app user up: state, consent and devices.
func (d *dashboard) userPage(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	data := &userData{UserID: strings.TrimSpace(r.URL.Query().Get("userId"))}
	v := viewOf("Users", a, data)
	if data.UserID == "" {
		d.render(w, r, http.StatusOK, "user", v)
		return
	}
	u, devices, err := d.Store.User(r.Context(), a.ID, data.UserID)
	if errors.Is(err, herald.ErrUserNotFound) {
		v.Problem = &problem{Code: herald.ErrNotFound.Code, Message: "No user with this ID was ever registered in this app."}
		d.render(w, r, http.StatusNotFound, "user", v)
		return
	}
	if err != nil {
		d.failOn(w, r, err, "user", v)
		return
	}
	data.User, data.Devices = &u, devices
	d.render(w, r, http.StatusOK, "user", v)
}
