package admin

import (
	"cmp"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/heraldpush/herald"
)

// scheduleInputLayout is how a scheduleTime is written (and how an HTML
// datetime-local field posts it): YYYY-MM-DDTHH:MM in the app's time zone.
const scheduleInputLayout = "2006-01-02T15:04"

type scheduledRow struct {
	Push     herald.Push
	Editable bool
}

type scheduledData struct {
	Rows    []scheduledRow
	NextURL string
}

// scheduledView lists an app's scheduled pushes, soonest first.
func (d *dashboard) scheduledView(r *http.Request, a herald.App) (view, error) {
	f := herald.PushFilter{Scheduled: true, Cursor: r.URL.Query().Get("cursor"), Limit: dashboardPageSize}
	ps, next, err := d.Store.Pushes(r.Context(), a.ID, f)
	if err != nil {
		return view{}, err
	}
	data := scheduledData{}
	for _, p := range ps {
		data.Rows = append(data.Rows, scheduledRow{Push: p, Editable: p.CheckEditable(d.Now()) == nil})
	}
	if next != "" {
		data.NextURL = appPath(a.ID, "scheduled") + "?" + url.Values{"cursor": {next}}.Encode()
	}
	return viewOf("Scheduled pushes", a, data), nil
}

func (d *dashboard) scheduledPage(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	v, err := d.scheduledView(r, a)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "scheduled", v)
}

// editForm is the edit form of a scheduled push: the push's values, or
// what was posted.
type editForm struct {
	Title, Content, LinkURL, ImageURL, ScheduleTime string
	// Localized is the push's entries as the API's JSON object, "" for
	// none.
	Localized    string
	IsUsingBadge bool
}

type editData struct {
	Push     herald.Push
	Form     editForm
	Editable bool
}

func formOfPush(p herald.Push, a herald.App) editForm {
	f := editForm{Title: p.Content.Title, Content: p.Content.Content, LinkURL: p.Content.LinkURL, ImageURL: p.Content.ImageURL, IsUsingBadge: p.Badge}
	if len(p.Localized) > 0 {
		entries := make(map[string]herald.Content, len(p.Localized))
		for _, e := range p.Localized {
			entries[e.Lang] = herald.Content{Title: e.Title, Content: e.Content}
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // the template escapes it; the text stays readable
		enc.SetIndent("", "  ")
		enc.Encode(entries)
		f.Localized = strings.TrimSpace(b.String())
	}
	if at := p.ScheduleReading(a.Location()); at != nil {
		f.ScheduleTime = at.Format(scheduleInputLayout)
	}
	return f
}

// editFormFrom reads the posted form. Browsers post a text area's line
// breaks as CRLF; they are read back as the LF the push holds.
func editFormFrom(v url.Values) editForm {
	text := func(k string) string { return strings.ReplaceAll(v.Get(k), "\r\n", "\n") }
	return editForm{Title: text("title"), Content: text("content"), LinkURL: text("linkURL"), ImageURL: text("imageURL"),
		ScheduleTime: strings.TrimSpace(v.Get("scheduleTime")), Localized: strings.TrimSpace(text("localized")), IsUsingBadge: v.Get("isUsingBadge") == "true"}
}

func (d *dashboard) editView(a herald.App, p herald.Push, f editForm) view {
	return viewOf("Edit scheduled push", a, editData{Push: p, Form: f, Editable: p.CheckEditable(d.Now()) == nil})
}

func (d *dashboard) editPage(w http.ResponseWriter, r *http.Request) {
	if a, p, ok := d.appPush(w, r); ok {
		d.render(w, r, http.StatusOK, "edit", d.editView(a, p, formOfPush(p, a)))
	}
}

// pushChange turns the edit form into the change that
// PATCH /admin/v1/pushes/{pushId} makes of the same fields, judged by the
// same rules (judgeEdit): only the fields that differ from the push are
// changed; entries emptied are removed.
func (d *dashboard) pushChange(a herald.App, p herald.Push, f editForm) (herald.PushChange, error) {
	c := herald.PushChange{AdPrefixRequired: !a.NoAdPrefixCheck, App: &a}
	for _, fl := range []struct {
		value, current string
		dst            **string
	}{
		{f.Title, p.Content.Title, &c.Title},
		{f.Content, p.Content.Content, &c.Content},
		{f.LinkURL, p.Content.LinkURL, &c.LinkURL},
		{f.ImageURL, p.Content.ImageURL, &c.ImageURL},
	} {
		if fl.value != fl.current {
			v := fl.value
			*fl.dst = &v
		}
	}
	current := formOfPush(p, a)
	var localized json.RawMessage
	if f.Localized != current.Localized {
		localized = json.RawMessage(cmp.Or(f.Localized, "{}"))
	}
	details := judgeEdit(p, &c, localized)
	if f.IsUsingBadge != p.Badge {
		c.Badge = &f.IsUsingBadge
	}
	if f.ScheduleTime != current.ScheduleTime {
		t, reason := herald.ParseScheduleTime(f.ScheduleTime, a.Location(), d.Now())
		if reason != "" {
			details = append(details, herald.Detail{Field: "scheduleTime", Reason: reason})
		}
		if p.LocalTime { // its new wall-clock time, from the first zone's
			t = herald.LocalStart(t, a.Location())
		}
		c.ScheduledAt = &t
	}
	if len(details) > 0 {
		return c, herald.Invalid(details...)
	}
	return c, nil
}

func (f editForm) unchanged(p herald.Push, a herald.App) bool { return f == formOfPush(p, a) }

func (d *dashboard) editPush(w http.ResponseWriter, r *http.Request) {
	a, p, ok := d.appPush(w, r)
	if !ok {
		return
	}
	f := editFormFrom(r.PostForm)
	if f.unchanged(p, a) {
		d.done(w, r, appPath(a.ID, "scheduled"), flash{AppID: a.ID, Notice: "Nothing changed."})
		return
	}
	c, err := d.pushChange(a, p, f)
	if err == nil {
		_, err = d.Delivery.EditScheduled(r.Context(), p.ID, c)
	}
	if err != nil {
		d.failOn(w, r, err, "edit", d.editView(a, p, f))
		return
	}
	d.done(w, r, appPath(a.ID, "scheduled"), flash{AppID: a.ID, Notice: "Scheduled push updated."})
}

func (d *dashboard) cancelPush(w http.ResponseWriter, r *http.Request) {
	if !confirmed(r) {
		http.Redirect(w, r, r.URL.Path, http.StatusSeeOther) // to the confirmation page
		return
	}
	a, p, ok := d.appPush(w, r)
	if !ok {
		return
	}
	if deferring(p) {
		d.cancelDeferred(w, r, a, p)
		return
	}
	if held(p) {
		d.cancelHeld(w, r, a, p)
		return
	}
	if awaiting(p) {
		d.cancelAwaiting(w, r, a, p)
		return
	}
	if _, err := d.Delivery.CancelScheduled(r.Context(), p.ID); err != nil {
		v, lerr := d.scheduledView(r, a)
		if lerr != nil {
			d.fail(w, r, lerr)
			return
		}
		d.failOn(w, r, err, "scheduled", v)
		return
	}
	d.done(w, r, appPath(a.ID, "scheduled"), flash{AppID: a.ID, Notice: "Scheduled push cancelled; its Server Actions were refunded."})
}
