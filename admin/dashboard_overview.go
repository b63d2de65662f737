package admin

import (
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
)

// overviewLatest is how many of the latest pushes the overview lists.
const overviewLatest = 10

type overviewData struct {
	Days    int
	Choices []int
	Totals  herald.PushTotals
	Latest  []herald.Push
	// Chart draws the window's sent, received and opened per hour or day.
	Chart template.HTML
}

// overviewPage is an app's first page: its pushes of the last 1, 7 or 30
// days summed (GET …/overview's figures), those sums per hour (1 day) or
// day as a chart, and its latest pushes.
func (d *dashboard) overviewPage(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	data := &overviewData{Days: herald.DefaultOverviewDays, Choices: herald.OverviewDays}
	v := viewOf("Overview", a, data)
	days, err := overviewDays(r.URL.Query())
	if err != nil {
		d.failOn(w, r, err, "overview", v)
		return
	}
	data.Days = days
	var quarters []herald.QuarterCounts
	if data.Totals, err = d.totals(r.Context(), a.ID, days); err == nil {
		quarters, err = d.Store.PushQuarters(r.Context(), a.ID, data.Totals.From, data.Totals.To)
	}
	if err == nil {
		data.Chart = overviewChart(quarters, data.Totals, days, a.Location())
		data.Latest, _, err = d.Store.Pushes(r.Context(), a.ID, herald.PushFilter{Limit: overviewLatest})
	}
	if err != nil {
		d.failOn(w, r, err, "overview", v)
		return
	}
	d.render(w, r, http.StatusOK, "overview", v)
}

type usersData struct {
	Q     string
	Users []herald.UserSummary
	// NextURL continues the list after this page; "" on the last one.
	NextURL string
}

// usersPage lists an app's users by userId, a page at a time, those whose
// id starts with q when searched; each links to its user page.
func (d *dashboard) usersPage(w http.ResponseWriter, r *http.Request, a herald.App) {
	q := r.URL.Query()
	data := &usersData{Q: strings.TrimSpace(q.Get("q"))}
	v := viewOf("Users", a, data)
	q.Set("q", data.Q)
	f, details := userFilterOf(q)
	if len(details) > 0 {
		d.failOn(w, r, herald.Invalid(details...), "users", v)
		return
	}
	us, next, err := d.Store.Users(r.Context(), a.ID, f)
	if err != nil {
		d.failOn(w, r, err, "users", v)
		return
	}
	data.Users = us
	for _, u := range us {
		access.NoteOf(r.Context()).ShowedUsers(u.ID)
	}
	if next != "" {
		nq := url.Values{"cursor": {next}}
		if data.Q != "" {
			nq.Set("q", data.Q)
		}
		if l := q.Get("limit"); l != "" {
			nq.Set("limit", strconv.Itoa(f.Limit))
		}
		data.NextURL = appPath(a.ID, "users") + "?" + nq.Encode()
	}
	d.render(w, r, http.StatusOK, "users", v)
}
