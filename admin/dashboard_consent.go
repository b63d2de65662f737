package admin

import (
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
)

// consentData is what the consent page shows: how many users are due for
// re-confirmation now and within the window, and a page of them.
type consentData struct {
	Within          string
	DueNow, DueSoon int
	Users           []herald.ConsentDue
	// NextURL continues the list after this page; "" on the last one.
	NextURL string
	// CSVNow and CSVSoon download every user due now, and within the window.
	CSVNow, CSVSoon string
}

// defaultDueWithin is the window the consent page shows by default.
const defaultDueWithin = "30d"

// consentPage shows the two-year re-confirmation: the count of users due
// now and within the window (?within=30d), the soonest due first, and
// links to the CSV of each.
func (d *dashboard) consentPage(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	data := &consentData{Within: r.URL.Query().Get("within")}
	if data.Within == "" {
		data.Within = defaultDueWithin
	}
	v := viewOf("Consent re-confirmation", a, data)
	q := url.Values{"within": {data.Within}, "cursor": {r.URL.Query().Get("cursor")}}
	due, err := parseDueQuery(&http.Request{URL: &url.URL{RawQuery: q.Encode()}}, d.Now())
	if err == nil {
		err = d.fillConsent(r, a, data, due)
	}
	if err != nil {
		d.failOn(w, r, err, "consent", v)
		return
	}
	d.render(w, r, http.StatusOK, "consent", v)
}

// fillConsent reads the counts and the page of data.
func (d *dashboard) fillConsent(r *http.Request, a herald.App, data *consentData, due dueQuery) error {
	var err error
	ctx, now := r.Context(), d.Now()
	if data.DueNow, err = d.Store.CountConsentDue(ctx, a.ID, now); err != nil {
		return err
	}
	if data.DueSoon, err = d.Store.CountConsentDue(ctx, a.ID, due.Until); err != nil {
		return err
	}
	users, next, err := d.Store.ConsentDue(ctx, a.ID, due.Until, due.Limit, due.Cursor)
	if err != nil {
		return err
	}
	data.Users = users
	for _, u := range users {
		access.NoteOf(r.Context()).ShowedUsers(u.UserID)
	}
	if next != "" {
		data.NextURL = appPath(a.ID, "consent") + "?" + url.Values{"within": {data.Within}, "cursor": {next}}.Encode()
	}
	data.CSVNow = appPath(a.ID, "consent-due.csv") + "?within=0d"
	data.CSVSoon = appPath(a.ID, "consent-due.csv") + "?" + url.Values{"within": {data.Within}}.Encode()
	return nil
}

// consentCSV downloads every user due for re-confirmation within the
// window (?within=, 0d by default) as CSV: userId, marketing,
// marketingNight, confirmedAt, dueAt (RFC 3339, UTC), soonest due first.
func (d *dashboard) consentCSV(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	due, err := parseDueQuery(r, d.Now())
	if err != nil {
		d.fail(w, r, err)
		return
	}
	// Read it all before writing, so a failure is an error page, not a
	// truncated file.
	var all []herald.ConsentDue
	for cursor := ""; ; {
		page, next, err := d.Store.ConsentDue(r.Context(), a.ID, due.Until, maxDueLimit, cursor)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		all = append(all, page...)
		if next == "" {
			break
		}
		cursor = next
	}
	for _, u := range all {
		access.NoteOf(r.Context()).ShowedUsers(u.UserID)
	}
	name := fmt.Sprintf("consent-due-%s-%s.csv", a.ID, d.Now().In(a.Location()).Format("20060102"))
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	cw := csv.NewWriter(w)
	cw.Write([]string{"userId", "marketing", "marketingNight", "confirmedAt", "dueAt"})
	for _, u := range all {
		cw.Write([]string{csvCell(u.UserID), strconv.FormatBool(u.Consent.Marketing), strconv.FormatBool(u.Consent.MarketingNight),
			u.ConfirmedAt.UTC().Format(time.RFC3339Nano), u.DueAt.UTC().Format(time.RFC3339Nano)})
	}
	cw.Flush()
}

// csvCell keeps a spreadsheet from reading a user id as a formula: one
// starting with = + @ or a control character, or with - not followed by
// digits only (a negative numeric id stays as it is), is prefixed with '.
func csvCell(s string) string {
	if s == "" {
		return s
	}
	switch c := s[0]; {
	case c == '=' || c == '+' || c == '@' || c < 0x20:
		return "'" + s
	case c == '-':
		if _, err := strconv.ParseInt(s, 10, 64); err != nil {
			return "'" + s
		}
	}
	return s
}

// consentForm is the user page's form setting a user's pair as the
// operator.
type consentForm struct {
	Marketing, MarketingNight bool
}

// setUserConsent is the user page's form: the operator sets (or, with the
// same values, re-confirms) a user's pair, recorded with source admin.
func (d *dashboard) setUserConsent(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	userID := strings.TrimSpace(r.PostFormValue("userId"))
	f := consentForm{Marketing: r.PostFormValue("marketing") == "true", MarketingNight: r.PostFormValue("marketingNight") == "true"}
	change := herald.ConsentChange{Marketing: &f.Marketing, MarketingNight: &f.MarketingNight, Source: herald.SourceAdmin}
	_, err := d.Store.SetUserConsent(r.Context(), a.ID, userID, change)
	switch {
	case errors.Is(err, herald.ErrUserWithdrawn):
		err = herald.Invalid(herald.Detail{Field: "userId", Reason: "withdrew: the user must register again through the SDK first"})
	default:
		err = userError(err)
	}
	to := appPath(a.ID, "users") + "?" + url.Values{"userId": {userID}}.Encode()
	if err != nil {
		data := &userData{UserID: userID, Form: f}
		d.loadUser(r, a, data)
		d.failOn(w, r, err, "user", viewOf("Users", a, data))
		return
	}
	access.NoteOf(r.Context()).ShowedUsers(userID)
	d.done(w, r, to, flash{AppID: a.ID, Notice: fmt.Sprintf("Consent of user %s set: marketing %s, night %s (recorded as the operator's, source admin).",
		userID, yesNo(f.Marketing), yesNo(f.MarketingNight))})
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// sourceWords says in plain words who made a consent change.
func sourceWords(s herald.ConsentSource) string {
	switch s {
	case herald.SourceSDK:
		return "the app on the device"
	case herald.SourceServerAPI:
		return "the app's server (Server API)"
	case herald.SourceAdmin:
		return "an operator (admin)"
	case herald.SourceWithdrawal:
		return "withdrawal"
	case herald.SourceAppDefault:
		return "the app's default for new devices"
	}
	return string(s)
}

// runReconfirmation sends the re-confirmation notices at once, as the
// admin API's run does, and tells how many users they went to.
func (d *dashboard) runReconfirmation(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	if !a.Reconfirmation.Enabled || d.Delivery == nil {
		d.fail(w, r, herald.ErrReconfirmationOff)
		return
	}
	n, id, _, err := d.Delivery.Reconfirm(r.Context(), a, "")
	if err != nil {
		d.fail(w, r, err)
		return
	}
	notice := "Nobody was due with a device: no notice sent."
	if id != "" {
		notice = fmt.Sprintf("Re-confirmation notice sent to %d users (push %s).", n, id)
	}
	d.done(w, r, appPath(a.ID, "consent"), flash{AppID: a.ID, Notice: notice})
}
