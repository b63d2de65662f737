package admin

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
)

// accessData is what the Access page shows: its filters as typed, a page
// of records, and the chain's verdict when asked.
type accessData struct {
	Actor, AppID, UserID, From, To string
	Records                        []access.Record
	NextURL                        string
	Verdict                        *access.Verdict
}

// accessTimeLayouts are the forms a time filter takes: the page's
// datetime-local inputs (UTC), with or without seconds, or RFC 3339.
var accessTimeLayouts = []string{"2006-01-02T15:04:05", "2006-01-02T15:04", time.RFC3339}

// accessFilterOfPage reads the page's filters: those of the API, with
// times as the page's inputs give them.
func accessFilterOfPage(q url.Values) (accessData, access.Filter, []herald.Detail) {
	data := accessData{Actor: strings.TrimSpace(q.Get("actor")), AppID: strings.TrimSpace(q.Get("appId")),
		UserID: strings.TrimSpace(q.Get("userId")), From: q.Get("from"), To: q.Get("to")}
	f := access.Filter{Actor: data.Actor, AppID: data.AppID, UserID: data.UserID, Cursor: q.Get("cursor"),
		Limit: access.DefaultLimit}
	var d []herald.Detail
	for _, t := range []struct {
		name, v string
		dst     *time.Time
	}{{"from", data.From, &f.From}, {"to", data.To, &f.To}} {
		if t.v == "" {
			continue
		}
		ok := false
		for _, layout := range accessTimeLayouts {
			if at, err := time.ParseInLocation(layout, t.v, time.UTC); err == nil {
				*t.dst, ok = at, true
				break
			}
		}
		if !ok {
			d = append(d, herald.Detail{Field: t.name, Reason: "must be a date and time"})
		}
	}
	return data, f, d
}

// accessPage lists the access records, filtered and paged, and verifies
// the chain when asked (?verify=1).
func (d *dashboard) accessPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	data, f, details := accessFilterOfPage(q)
	v := view{Title: "Access records", Data: &data}
	if len(details) > 0 {
		d.failOn(w, r, herald.Invalid(details...), "access", v)
		return
	}
	if q.Get("verify") != "" {
		verdict, err := d.records.Verify(r.Context(), "")
		if err != nil {
			d.failOn(w, r, err, "access", v)
			return
		}
		data.Verdict = &verdict
	}
	recs, next, err := d.records.Page(r.Context(), f)
	if err != nil {
		d.failOn(w, r, err, "access", v)
		return
	}
	data.Records = recs
	if next != "" {
		nq := url.Values{"cursor": {next}}
		for k, val := range map[string]string{"actor": data.Actor, "appId": data.AppID, "userId": data.UserID, "from": data.From, "to": data.To} {
			if val != "" {
				nq.Set(k, val)
			}
		}
		data.NextURL = "/access?" + nq.Encode()
	}
	d.render(w, r, http.StatusOK, "access", v)
}

// accessDownload streams the records the page's filters select as JSON
// lines, as the API's format=jsonl does: only with a reason, kept in the
// download's own record, written before the stream.
func (d *dashboard) accessDownload(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	data, f, details := accessFilterOfPage(q)
	reason := strings.TrimSpace(q.Get("reason"))
	if p := herald.DownloadReasonProblem(reason); p != nil {
		details = append(details, *p)
	}
	if len(details) > 0 {
		d.failOn(w, r, herald.Invalid(details...), "access", view{Title: "Access records", Data: &data})
		return
	}
	d.records.Stream(w, r, f, reason, d.fail)
}
