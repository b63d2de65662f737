package admin

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/web"
)

// A push's recipients export (DESIGN 15): a line per device the push was
// planned for, and per user it found no device of, streamed as CSV or
// JSON lines; a download of personal data, so it takes a reason, kept in
// its access record, which is written before the first byte goes out.

// The export's formats and their media types.
const (
	formatCSV   = "csv"
	formatJSONL = "jsonl"
)

var recipientsTypes = map[string]string{
	formatCSV:   "text/csv; charset=utf-8",
	formatJSONL: "application/jsonl; charset=utf-8",
}

// recipientsHeader is the CSV's header, the JSON members' names, in the
// order DESIGN 15 gives.
var recipientsHeader = []string{"userId", "deviceId", "tokenSuffix", "outcome", "sentAt", "receivedAt", "openedAt"}

// recipientsQuery reads an export's format (csv when absent) and reason,
// trimmed; details name what is wrong with them.
func recipientsQuery(q url.Values) (format, reason string, details []herald.Detail) {
	format = q.Get("format")
	if format == "" {
		format = formatCSV
	}
	if recipientsTypes[format] == "" {
		details = append(details, herald.Detail{Field: "format", Reason: "must be csv or jsonl"})
	}
	if p := herald.DownloadReasonProblem(q.Get("reason")); p != nil {
		details = append(details, *p)
	}
	return format, strings.TrimSpace(q.Get("reason")), details
}

// getPushRecipients is GET /admin/v1/pushes/{pushId}/recipients?format=&reason=.
func (s *server) getPushRecipients(w http.ResponseWriter, r *http.Request) {
	format, reason, details := recipientsQuery(r.URL.Query())
	if len(details) > 0 {
		web.Error(w, r, herald.Invalid(details...))
		return
	}
	p, err := s.guard.PushOf(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	s.streamRecipients(w, r, p, format, reason, web.Error)
}

// streamRecipients writes p's recipients export in format. The access
// record is written once the first page is read (so it names that page's
// users, and counts the push's requested users) and before anything of
// the answer goes out; failed answers an error met until then. An error
// after that can only cut the download short: the connection is aborted,
// so the client sees a body that did not end, and the error is logged.
func (s *server) streamRecipients(w http.ResponseWriter, r *http.Request, p herald.Push, format, reason string,
	failed func(http.ResponseWriter, *http.Request, error)) {
	n := access.NoteOf(r.Context())
	n.About(p.AppID, p.ID)
	n.DownloadReason(reason)
	bw := bufio.NewWriter(w)
	enc := newRecipientsEncoder(bw, format)
	rc := http.NewResponseController(w)
	started := false
	begin := func(first []herald.DeviceOutcome) error {
		n.ShowedSomeUsers(p.RequestedUsers, firstUsers(first)...)
		h := w.Header()
		h.Set("Content-Type", recipientsTypes[format])
		h.Set("Content-Disposition", `attachment; filename="`+recipientsFileName(p.ID, format)+`"`)
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		if err := n.RecordNow(http.StatusOK); err != nil {
			h.Del("Content-Disposition")
			return herald.Unavailable(err)
		}
		started = true
		return enc.header()
	}
	err := s.Store.EachDeviceOutcome(r.Context(), p.ID, func(page []herald.DeviceOutcome) error {
		if !started {
			if err := begin(page); err != nil {
				return err
			}
		}
		for _, o := range page {
			if err := enc.line(o); err != nil {
				return err
			}
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		_ = rc.Flush() // a writer that cannot flush sends it at the end
		web.Extend(r.Context(), w, web.RequestDeadline)
		return nil
	})
	if err == nil && !started {
		err = begin(nil)
	}
	if err == nil {
		err = bw.Flush()
	}
	switch {
	case err == nil:
	case !started:
		failed(w, r, err)
	default:
		s.Logger.ErrorContext(r.Context(), "recipients download ended early", "push", p.ID, "err", err)
		panic(http.ErrAbortHandler)
	}
}

// firstUsers returns the distinct users of a page, as many as a record
// lists.
func firstUsers(page []herald.DeviceOutcome) []string {
	seen := map[string]bool{}
	var ids []string
	for _, o := range page {
		if o.UserID != "" && !seen[o.UserID] && len(ids) < access.MaxUserIDs {
			seen[o.UserID] = true
			ids = append(ids, o.UserID)
		}
	}
	return ids
}

// recipientsFileName names the download: the push's id with anything but
// letters, digits, '-' and '_' replaced.
func recipientsFileName(pushID, format string) string {
	return "herald-push-" + safeFileName(pushID) + "-recipients." + format
}

// recipientsEncoder writes the export's lines in one format.
type recipientsEncoder struct {
	csv  *csv.Writer
	json *json.Encoder
}

func newRecipientsEncoder(w *bufio.Writer, format string) *recipientsEncoder {
	if format == formatJSONL {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return &recipientsEncoder{json: enc}
	}
	return &recipientsEncoder{csv: csv.NewWriter(w)}
}

// header writes the CSV's header; JSON lines have none.
func (e *recipientsEncoder) header() error {
	if e.csv == nil {
		return nil
	}
	return e.csv.Write(recipientsHeader)
}

// recipientJSON is a JSON line: null for what is absent.
type recipientJSON struct {
	UserID      *string        `json:"userId"`
	DeviceID    *string        `json:"deviceId"`
	TokenSuffix *string        `json:"tokenSuffix"`
	Outcome     herald.Outcome `json:"outcome"`
	SentAt      *string        `json:"sentAt"`
	ReceivedAt  *string        `json:"receivedAt"`
	OpenedAt    *string        `json:"openedAt"`
}

func (e *recipientsEncoder) line(o herald.DeviceOutcome) error {
	if e.json != nil {
		return e.json.Encode(recipientJSON{UserID: orNull(o.UserID), DeviceID: orNull(o.DeviceID), TokenSuffix: orNull(o.TokenSuffix),
			Outcome: o.Outcome, SentAt: exportTime(o.SentAt), ReceivedAt: exportTime(o.ReceivedAt), OpenedAt: exportTime(o.OpenedAt)})
	}
	text := func(t *time.Time) string {
		if s := exportTime(t); s != nil {
			return *s
		}
		return ""
	}
	if err := e.csv.Write([]string{csvCell(o.UserID), csvCell(o.DeviceID), csvCell(o.TokenSuffix), string(o.Outcome),
		text(o.SentAt), text(o.ReceivedAt), text(o.OpenedAt)}); err != nil {
		return err
	}
	e.csv.Flush() // into the bufio.Writer, which the page's end flushes
	return e.csv.Error()
}

// exportTime is a time as the export writes it: RFC 3339 in UTC with
// milliseconds; nil for none.
func exportTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	return &s
}

func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// dashboardRecipients is GET /apps/{appId}/pushes/{pushId}/recipients?format=&reason=:
// the push page's download of its recipients export. A refused reason or
// format shows the push page again, naming it.
func (d *dashboard) dashboardRecipients(w http.ResponseWriter, r *http.Request) {
	a, p, ok := d.appPush(w, r)
	if !ok {
		return
	}
	format, reason, details := recipientsQuery(r.URL.Query())
	if len(details) > 0 {
		data, err := d.pushPageData(r, a, p)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		data.Reason, data.Format = r.URL.Query().Get("reason"), format
		d.failOn(w, r, herald.Invalid(details...), "push", viewOf("Push "+shortID(p.ID), a, data))
		return
	}
	d.streamRecipients(w, r, p, format, reason, d.fail)
}
