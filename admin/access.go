package admin

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/web"
)

// recordGrace is how long past the request's deadline the write of its
// record may take. The write runs outside the request's cancellation (a
// client that went away after a change was made must not take the record
// of the change with it) but not outside its deadline, so that an outage
// is answered 503 within DESIGN 4's 10 seconds on the admin listener as on
// the others.
const recordGrace = time.Second

// recordTimeout bounds the write of a record made without a deadline.
const recordTimeout = web.RequestDeadline + recordGrace

// recorded writes the access record of each request h answers that was
// authenticated (withOperator put its operator in the note) or was a
// sign-in attempt (the handler called signIn), DESIGN 11. A request that
// may change something has its intent recorded before the handler acts
// (admit calls the note's intend), durable in the store's intents; the
// record of its answer deletes the intent as it is appended, and an intent
// left behind becomes a record of unknown outcome (RecordPending): a
// change never exists without a record, even when the record of its
// answer cannot be written. The answer is
// held back until the record is durable: h writes into a buffer, the
// record is appended (a batched transaction, so concurrent requests share
// its commit), and only then does the answer go out; an answer whose
// record could not be written becomes 503 ERR-AB-SYS-01 (failed writes
// it as its route answers errors). A handler that streams has the record
// written first (accessNote.recordNow); what it writes after goes straight
// out.
// Requests neither authenticated nor signing in (static files, a refused
// token) are answered as they are, without a record.
func (s *server) recorded(h http.HandlerFunc, failed func(http.ResponseWriter, *http.Request, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r, n := withAccessNote(r)
		b := &heldWriter{w: w, header: http.Header{}}
		n.intent = func() error {
			rec, ok := n.record(r, herald.StatusUnknown, s.Now(), s.TrustProxy)
			if !ok {
				return nil
			}
			ctx, cancel := recordContext(r.Context(), s.Now)
			defer cancel()
			id := herald.NewID("int_", rec.At)
			if err := s.Store.RecordIntent(ctx, id, rec); err != nil {
				return err
			}
			n.intended(id)
			return nil
		}
		n.flush = func(status int) error {
			if rec, ok := n.record(r, status, s.Now(), s.TrustProxy); ok {
				if err := s.appendRecord(r.Context(), rec); err != nil {
					return err
				}
			}
			b.release(status)
			return nil
		}
		h(b, r)
		if b.released {
			return
		}
		if err := n.flush(b.statusOr200()); err != nil {
			s.Logger.ErrorContext(r.Context(), "access record not written", "route", r.Pattern, "err", err)
			failed(w, r, herald.ErrUnavailable)
		}
	}
}

// appendRecord appends one record; its transaction shares a commit with
// those of other requests queued meanwhile (sqlstore's group commit). It
// keeps the request's deadline (and recordGrace), not its cancellation.
func (s *server) appendRecord(ctx context.Context, rec herald.AccessRecord) error {
	ctx, cancel := recordContext(ctx, s.Now)
	defer cancel()
	_, err := s.Store.AppendAccessRecords(ctx, s.MasterKey.AccessKey(), []herald.AccessRecord{rec})
	return err
}

// recordContext is the context a record (or intent) is written in: the
// request's values and deadline, with recordGrace, but not its
// cancellation.
func recordContext(ctx context.Context, now func() time.Time) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = now().Add(recordTimeout)
	}
	return context.WithDeadline(context.WithoutCancel(ctx), deadline.Add(recordGrace))
}

// heldWriter holds an answer back (its header, status and body) until
// release, after which it writes straight through.
type heldWriter struct {
	w        http.ResponseWriter
	header   http.Header
	status   int
	body     []byte
	released bool
}

func (b *heldWriter) Header() http.Header {
	if b.released {
		return b.w.Header()
	}
	return b.header
}

func (b *heldWriter) WriteHeader(status int) {
	if b.released {
		b.w.WriteHeader(status)
		return
	}
	if b.status == 0 {
		b.status = status
	}
}

func (b *heldWriter) Write(p []byte) (int, error) {
	if b.released {
		return b.w.Write(p)
	}
	if b.status == 0 {
		b.status = http.StatusOK
	}
	b.body = append(b.body, p...)
	return len(p), nil
}

func (b *heldWriter) statusOr200() int {
	if b.status == 0 {
		return http.StatusOK
	}
	return b.status
}

// release writes what was held, with status when none was written.
func (b *heldWriter) release(status int) {
	if b.released {
		return
	}
	b.released = true
	h := b.w.Header()
	for k, v := range b.header {
		h[k] = v
	}
	if b.status != 0 {
		status = b.status
	}
	b.w.WriteHeader(status)
	b.w.Write(b.body)
	b.body = nil
}

// record is the access record of r answered status at now; ok is false
// when the request is not recorded (neither authenticated nor a sign-in).
func (n *accessNote) record(r *http.Request, status int, now time.Time, trustProxy bool) (herald.AccessRecord, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	rec := herald.AccessRecord{At: now, IP: accessIP(r, trustProxy), Method: r.Method, Route: r.Pattern,
		AppID: cmp.Or(n.appID, r.PathValue("appId")), PushID: cmp.Or(n.pushID, r.PathValue("pushId")),
		UserIDs: append([]string{}, n.userIDs...), UserCount: n.users, Status: status, Reason: n.reason, Intent: n.intentID}
	var who *herald.Operator
	switch {
	case n.signedIn:
		rec.Email = herald.RecordedEmail(n.email)
		if n.operator.ID != "" {
			who = &n.operator
		}
	case n.actor != nil:
		who = n.actor
		rec.Email = who.Email
	default:
		return rec, false
	}
	if who != nil {
		id := who.ID
		rec.Actor = &id
	}
	return rec, true
}

// accessIP is the client's address as a record keeps it: the peer's, or
// behind a trusted proxy the last X-Forwarded-For entry.
func accessIP(r *http.Request, trustProxy bool) string {
	host := r.RemoteAddr
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if xff := r.Header.Get("X-Forwarded-For"); trustProxy && xff != "" {
		parts := strings.Split(xff, ",")
		host = strings.TrimSpace(parts[len(parts)-1])
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.Unmap().String()
	}
	return host
}

// accessFilterOf reads the list's query: from, to (RFC 3339), actor,
// appId, userId, limit (1–1000, default 100) and cursor.
func accessFilterOf(q map[string][]string) (herald.AccessFilter, []herald.Detail) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	f := herald.AccessFilter{Actor: get("actor"), AppID: get("appId"), UserID: get("userId"), Cursor: get("cursor"),
		Limit: herald.DefaultAccessLimit}
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
		if err != nil || n < 1 || n > herald.MaxAccessLimit {
			d = append(d, herald.Detail{Field: "limit", Reason: "must be an integer from 1 to 1000"})
		}
		f.Limit = n
	}
	if v := get("format"); v != "" && v != "jsonl" {
		d = append(d, herald.Detail{Field: "format", Reason: "must be jsonl, or absent for a page of JSON"})
	}
	return f, d
}

// listAccessRecords is GET /admin/v1/access-records: a page of records,
// or with format=jsonl every record that matches, one JSON object a line,
// which needs a reason (a download of personal data, DESIGN 12).
func (s *server) listAccessRecords(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, d := accessFilterOf(q)
	jsonl := q.Get("format") == "jsonl"
	if p := herald.DownloadReasonProblem(q.Get("reason")); jsonl && p != nil {
		d = append(d, *p)
	}
	if len(d) > 0 {
		web.Error(w, r, herald.Invalid(d...))
		return
	}
	if err := s.recordAttempts(r.Context()); err != nil {
		web.Error(w, r, err)
		return
	}
	if !jsonl {
		recs, next, err := s.Store.AccessRecords(r.Context(), f)
		if err != nil {
			web.Error(w, r, err)
			return
		}
		web.JSON(w, http.StatusOK, map[string]any{"records": recs, "nextCursor": orNil(next)})
		return
	}
	s.streamAccessRecords(w, r, f, strings.TrimSpace(q.Get("reason")), web.Error)
}

// streamDeadline bounds a JSONL download, which may outlast the request
// deadline a page of JSON has.
const streamDeadline = 10 * time.Minute

// streamAccessRecords writes the download's own record first, then the
// records as JSON lines; failed answers when that record cannot be
// written. An error once lines went out can only end the stream early; it
// is logged.
func (s *server) streamAccessRecords(w http.ResponseWriter, r *http.Request, f herald.AccessFilter, reason string,
	failed func(http.ResponseWriter, *http.Request, error)) {
	n := noteOf(r.Context())
	n.downloadReason(reason)
	w.Header().Set("Content-Type", "application/jsonl; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="access-records.jsonl"`)
	if err := n.recordNow(http.StatusOK); err != nil {
		w.Header().Del("Content-Disposition")
		failed(w, r, herald.ErrUnavailable)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), streamDeadline)
	defer cancel()
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	err := s.Store.EachAccessRecord(ctx, f, func(rec herald.AccessRecord) error {
		if err := r.Context().Err(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err // the client went away
		}
		return enc.Encode(rec)
	})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		s.Logger.ErrorContext(r.Context(), "access records download ended early", "err", err)
	}
}

// verifyAccessRecords is GET /admin/v1/access-records/verify, with head
// (a head herald audit head printed) proving the chain still holds it.
func (s *server) verifyAccessRecords(w http.ResponseWriter, r *http.Request) {
	v, err := s.verify(r.Context(), r.URL.Query().Get("head"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, v)
}

// verify walks the chain, after appending the records of ended attempt
// windows; head, when not "", is a head's JSON the chain must still hold.
func (s *server) verify(ctx context.Context, head string) (herald.AccessVerdict, error) {
	var given *herald.AccessHead
	if head != "" {
		h, err := herald.ParseAccessHead([]byte(head))
		if err != nil {
			return herald.AccessVerdict{}, err
		}
		given = &h
	}
	if err := s.recordAttempts(ctx); err != nil {
		return herald.AccessVerdict{}, err
	}
	return s.Store.VerifyAccessRecords(ctx, s.MasterKey.AccessKey(), given)
}

// accessHead is GET /admin/v1/access-records/head: the chain's signed
// head, to keep outside the database.
func (s *server) accessHead(w http.ResponseWriter, r *http.Request) {
	if err := s.recordAttempts(r.Context()); err != nil {
		web.Error(w, r, err)
		return
	}
	h, err := s.Store.AccessHead(r.Context())
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, h)
}
