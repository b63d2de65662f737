package access

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/web"
)

// filterOf reads the list's query: from, to (RFC 3339), actor,
// appId, userId, limit (1–1000, default 100) and cursor.
func filterOf(q map[string][]string) (Filter, []herald.Detail) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	f := Filter{Actor: get("actor"), AppID: get("appId"), UserID: get("userId"), Cursor: get("cursor"),
		Limit: DefaultLimit}
	var d []herald.Detail
	for _, t := range []struct {
		name string
		dst  *time.Time
	}{{"from", &f.From}, {"to", &f.To}} {
		if v := get(t.name); v != "" {
			at, err := time.Parse(time.RFC3339, v)
			if err != nil {
				d = append(d, herald.Detail{Field: t.name, Reason: "must be an RFC 3339 time"})
			}
			*t.dst = at
		}
	}
	if v := get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxLimit {
			d = append(d, herald.Detail{Field: "limit", Reason: "must be an integer from 1 to 1000"})
		}
		f.Limit = n
	}
	if v := get("format"); v != "" && v != "jsonl" {
		d = append(d, herald.Detail{Field: "format", Reason: "must be jsonl, or absent for a page of JSON"})
	}
	return f, d
}

// List is GET /admin/v1/access-records: a page of records,
// or with format=jsonl every record that matches, one JSON object a line,
// which needs a reason (a download of personal data, DESIGN 12).
func (rc *Recorder) List(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, d := filterOf(q)
	jsonl := q.Get("format") == "jsonl"
	if p := herald.DownloadReasonProblem(q.Get("reason")); jsonl && p != nil {
		d = append(d, *p)
	}
	if len(d) > 0 {
		web.Error(w, r, herald.Invalid(d...))
		return
	}
	if !jsonl {
		recs, next, err := rc.Page(r.Context(), f)
		if err != nil {
			web.Error(w, r, err)
			return
		}
		web.JSON(w, http.StatusOK, map[string]any{"records": recs, "nextCursor": cursorOrNil(next)})
		return
	}
	rc.Stream(w, r, f, strings.TrimSpace(q.Get("reason")), web.Error)
}

// Page is a page of the records f selects and the next page's cursor,
// after appending what waits for a record, so that a reader sees the
// aggregated records of every window that has ended.
func (rc *Recorder) Page(ctx context.Context, f Filter) ([]Record, string, error) {
	if err := rc.RecordPending(ctx); err != nil {
		return nil, "", err
	}
	return rc.Store.AccessRecords(ctx, f)
}

// streamDeadline bounds a JSONL download, which may outlast the request
// deadline a page of JSON has.
const streamDeadline = 10 * time.Minute

// Stream appends what waits for a record, writes the download's own
// record, then the records as JSON lines; failed answers when either
// cannot be written. An error once lines went out can only end the stream early; it
// is logged.
func (rc *Recorder) Stream(w http.ResponseWriter, r *http.Request, f Filter, reason string,
	failed func(http.ResponseWriter, *http.Request, error)) {
	if err := rc.RecordPending(r.Context()); err != nil {
		failed(w, r, err)
		return
	}
	n := NoteOf(r.Context())
	n.DownloadReason(reason)
	w.Header().Set("Content-Type", "application/jsonl; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="access-records.jsonl"`)
	if err := n.RecordNow(http.StatusOK); err != nil {
		w.Header().Del("Content-Disposition")
		failed(w, r, herald.ErrUnavailable)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), streamDeadline)
	defer cancel()
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	err := rc.Store.EachAccessRecord(ctx, f, func(rec Record) error {
		if err := r.Context().Err(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err // the client went away
		}
		return enc.Encode(rec)
	})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		rc.Logger.ErrorContext(r.Context(), "access records download ended early", "err", err)
	}
}

// VerifyHandler is GET /admin/v1/access-records/verify, with head
// (a head herald audit head printed) proving the chain still holds it.
func (rc *Recorder) VerifyHandler(w http.ResponseWriter, r *http.Request) {
	v, err := rc.Verify(r.Context(), r.URL.Query().Get("head"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, v)
}

// Verify walks the chain, after appending the records of ended attempt
// windows; head, when not "", is a head's JSON the chain must still hold.
func (rc *Recorder) Verify(ctx context.Context, head string) (Verdict, error) {
	var given *Head
	if head != "" {
		h, err := ParseHead([]byte(head))
		if err != nil {
			return Verdict{}, err
		}
		given = &h
	}
	if err := rc.RecordPending(ctx); err != nil {
		return Verdict{}, err
	}
	return rc.Store.VerifyAccessRecords(ctx, rc.Key, given)
}

// Head is GET /admin/v1/access-records/head: the chain's signed
// head, to keep outside the database.
func (rc *Recorder) Head(w http.ResponseWriter, r *http.Request) {
	if err := rc.RecordPending(r.Context()); err != nil {
		web.Error(w, r, err)
		return
	}
	h, err := rc.Store.AccessHead(r.Context())
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, h)
}

// cursorOrNil is the list's nextCursor: null at the end.
func cursorOrNil(next string) *string {
	if next == "" {
		return nil
	}
	return &next
}
