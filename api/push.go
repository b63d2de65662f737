package api

import (
	"context"
	"crypto/sha256"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/request"
	"github.com/heraldpush/herald/web"
)

// Pusher accepts pushes durably (delivery.Service).
type Pusher interface {
	Accept(ctx context.Context, p herald.Push, rs []herald.Recipient, idem *herald.Idempotency) (id string, replayed bool, err error)
}

// The success bodies of spec 4.3 and 4.4, exactly (DESIGN.md section 5).
const (
	answerRequested = "Push has been requested to be sent."
	answerScheduled = "Push has been scheduled successfully."
)

func (s *server) pushUsers(w http.ResponseWriter, r *http.Request) { s.push(w, r, herald.KindUsers) }
func (s *server) pushMessages(w http.ResponseWriter, r *http.Request) {
	s.push(w, r, herald.KindMessages)
}
func (s *server) pushTopic(w http.ResponseWriter, r *http.Request) { s.push(w, r, herald.KindTopic) }
func (s *server) pushAll(w http.ResponseWriter, r *http.Request)   { s.push(w, r, herald.KindAll) }
func (s *server) pushSegment(w http.ResponseWriter, r *http.Request) {
	s.push(w, r, herald.KindSegment)
}

// push runs a push endpoint, its gate passed (see routes): body read
// within limit, an idempotent repeat replayed, the request judged, the
// push accepted.
func (s *server) push(w http.ResponseWriter, r *http.Request, kind herald.PushKind) {
	received := s.now()
	app := appFrom(r.Context())
	body, err := readBody(r, request.PushLimit(kind))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	idem, done := s.replay(w, r, app, body, received)
	if done {
		return
	}
	p, rs, err := request.JudgePush(app, kind, body, received) // the gate was the route's, the size readBody's
	if err == nil && p.SegmentID != "" {
		p.Filter, err = audience.SegmentFilter(r.Context(), s.store, app.ID, p.SegmentID)
	}
	if err != nil {
		web.Error(w, r, err)
		return
	}
	id, _, err := s.pushes.Accept(r.Context(), p, rs, idem)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	answer(w, id, p.ScheduledAt, p.Status)
}

// replay answers a repeated Idempotency-Key with the first answer (done is
// true then, or when the key itself is refused). It runs before the body is
// judged: a repeat must get the first answer even when, say, its
// scheduleTime is no longer 60 s away.
func (s *server) replay(w http.ResponseWriter, r *http.Request, app herald.App, body []byte, received time.Time) (*herald.Idempotency, bool) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		return nil, false
	}
	if utf8.RuneCountInString(key) > herald.MaxIdempotencyKey || !utf8.ValidString(key) {
		web.Error(w, r, herald.Invalid(herald.Detail{Field: "Idempotency-Key", Reason: "must be at most 255 characters"}))
		return nil, true
	}
	h := sha256.Sum256(append([]byte(r.URL.Path+"\n"), body...))
	idem := &herald.Idempotency{Key: key, Hash: h[:]}
	first, found, err := s.store.IdempotentPush(r.Context(), app.ID, *idem, received)
	if err != nil {
		web.Error(w, r, err)
		return nil, true
	}
	if !found {
		return idem, false
	}
	answer(w, first.ID, first.ScheduledAt, first.Status)
	return nil, true
}

// answer writes the spec's JSON string with the X-Push-Id header; a
// scheduled push's also says, in X-Scheduled-At, the instant its
// scheduleTime was read as in the app's zone (RFC 3339, UTC), and one
// awaiting approval says so in X-Push-Status (the answer is the usual
// one, DESIGN 14).
func answer(w http.ResponseWriter, pushID string, scheduledAt *time.Time, status herald.PushStatus) {
	w.Header().Set("X-Push-Id", pushID)
	if status == herald.StatusAwaitingApproval {
		w.Header().Set("X-Push-Status", string(status))
	}
	if scheduledAt != nil {
		w.Header().Set("X-Scheduled-At", scheduledAt.UTC().Format(time.RFC3339))
		web.JSON(w, http.StatusOK, answerScheduled)
		return
	}
	web.JSON(w, http.StatusOK, answerRequested)
}
