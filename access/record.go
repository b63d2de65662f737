// Package access keeps the access records of the admin listener (DESIGN
// 11, docs/access-records.md): the middleware that records each
// authenticated request, dashboard page and sign-in attempt before its
// answer goes out, the intent a request that may change something writes
// before it acts, the note a handler fills for its record, and the admin
// API's routes that list, verify and give the head of the records' chain.
//
// It owns the records' vocabulary too: the Record and its canonical JSON,
// the chain's hash and the Key that signs it, the Head an operator keeps
// outside the database, the Filter the records are listed by, the Verdict
// of a verify, and the Store both SQL engines implement (storetest checks
// it). It imports only package herald (for the Operator a record names and
// the error codes) and web; identity, which counts sign-in attempts,
// imports it, never the reverse.
package access

import (
	"cmp"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/web"
)

// Recorder writes the access records of the requests it wraps.
type Recorder struct {
	Store Store
	// Key signs the records (herald.MasterKey.AccessKey).
	Key Key
	// Now is the clock; TrustProxy reads the client's address from the
	// last X-Forwarded-For entry.
	Now        func() time.Time
	TrustProxy bool
	Logger     *slog.Logger
	// pendingAt is when this node last appended what waits for a record
	// (Unix milliseconds; see RecordPendingDue).
	pendingAt atomic.Int64
}

// recordGrace is how long past the request's deadline the write of its
// record may take. The write runs outside the request's cancellation (a
// client that went away after a change was made must not take the record
// of the change with it) but not outside its deadline, so that an outage
// is answered 503 within DESIGN 4's 10 seconds on the admin listener as on
// the others.
const recordGrace = time.Second

// recordTimeout bounds the write of a record made without a deadline.
const recordTimeout = web.RequestDeadline + recordGrace

// Wrap writes the access record of each request h answers that was
// authenticated (its note was told Authenticated) or was a sign-in attempt
// (SignIn), DESIGN 11. A request that may change something has its intent
// recorded before the handler acts (the note's Intend, which the caller's
// authorization calls), durable in the store's intents; the record of its
// answer deletes the intent as it is appended, and an intent left behind
// becomes a record of unknown outcome (RecordPending): a change never
// exists without a record, even when the record of its answer cannot be
// written.
//
// The answer is held back until the record is durable: h writes into a
// buffer, the record is appended (a batched transaction, so concurrent
// requests share its commit), and only then does the answer go out; an
// answer whose record could not be written becomes 503 ERR-AB-SYS-01
// (failed writes it as its route answers errors). A handler that streams
// has the record written first (Note.RecordNow); what it writes after
// goes straight out. Requests neither authenticated nor signing in
// (static files, a refused token) are answered as they are, without a
// record.
func (rc *Recorder) Wrap(h http.HandlerFunc, failed func(http.ResponseWriter, *http.Request, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r, n := With(r)
		b := &heldWriter{w: w, header: http.Header{}}
		n.intent = func() error {
			rec, ok := n.record(r, StatusUnknown, rc.Now(), rc.TrustProxy)
			if !ok {
				return nil
			}
			ctx, cancel := recordContext(r.Context())
			defer cancel()
			id := herald.NewID("int_", rec.At)
			if err := rc.Store.RecordIntent(ctx, id, rec); err != nil {
				return err
			}
			n.intended(id)
			return nil
		}
		n.flush = func(status int) error {
			if rec, ok := n.record(r, status, rc.Now(), rc.TrustProxy); ok {
				if err := rc.append(r.Context(), rec); err != nil {
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
			rc.Logger.ErrorContext(r.Context(), "access record not written", "route", r.Pattern, "err", err)
			failed(w, r, herald.ErrUnavailable)
		}
	}
}

// append appends one record; its transaction shares a commit with those
// of other requests queued meanwhile (sqlstore's group commit). It keeps
// the request's deadline (and recordGrace), not its cancellation.
func (rc *Recorder) append(ctx context.Context, rec Record) error {
	ctx, cancel := recordContext(ctx)
	defer cancel()
	_, err := rc.Store.AppendAccessRecords(ctx, rc.Key, []Record{rec})
	return err
}

// recordContext is the context a record (or intent) is written in: the
// request's values and deadline, with recordGrace, but not its
// cancellation. A deadline is the real clock's, never the recorder's
// (which tests set to another day).
func recordContext(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(recordTimeout)
	}
	return context.WithDeadline(context.WithoutCancel(ctx), deadline.Add(recordGrace))
}

// pendingEvery is how often a node appends what waits for a record on its
// own (besides before the records are read, and the daily run).
const pendingEvery = time.Minute

// RecordPendingDue appends what waits for a record (RecordPending) when
// this node last did so pendingEvery ago or more: the sign-in and bearer
// paths call it, so a node that sees attempts records their ended windows.
func (rc *Recorder) RecordPendingDue(ctx context.Context) {
	now := rc.Now()
	last := rc.pendingAt.Load()
	if now.UnixMilli()-last < pendingEvery.Milliseconds() || !rc.pendingAt.CompareAndSwap(last, now.UnixMilli()) {
		return
	}
	if err := rc.RecordPending(ctx); err != nil {
		rc.Logger.ErrorContext(ctx, "record ended attempt windows", "err", err)
	}
}

// RecordPending appends the aggregated records of ended attempt windows
// and the records of abandoned intents.
func (rc *Recorder) RecordPending(ctx context.Context) error {
	_, err := rc.Store.RecordPending(ctx, rc.Key, rc.Now())
	return err
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

// Unwrap lets http.ResponseController reach the connection, for its
// read and write deadlines (web.Extend); a Flush through it would send
// the held answer early, and no handler of a recorded route flushes.
func (b *heldWriter) Unwrap() http.ResponseWriter { return b.w }

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
func (n *Note) record(r *http.Request, status int, now time.Time, trustProxy bool) (Record, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	rec := Record{At: now, IP: ClientIP(r, trustProxy), Method: r.Method, Route: r.Pattern,
		AppID: cmp.Or(n.appID, r.PathValue("appId")), PushID: cmp.Or(n.pushID, r.PathValue("pushId")),
		UserIDs: append([]string{}, n.userIDs...), UserCount: n.users, Status: status, Reason: n.reason, Intent: n.intentID}
	var who *herald.Operator
	switch {
	case n.signedIn:
		rec.Email = RecordedEmail(n.email)
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

// ClientIP is the client's address as a record keeps it: the peer's, or
// behind a trusted proxy the last X-Forwarded-For entry.
func ClientIP(r *http.Request, trustProxy bool) string {
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
