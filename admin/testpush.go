package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/web"
)

// Pusher accepts pushes durably (delivery.Service), as the Server API does.
type Pusher interface {
	Accept(ctx context.Context, p herald.Push, rs []herald.Recipient, idem *herald.Idempotency) (id string, replayed bool, err error)
}

// testPushRequest is the body of POST /admin/v1/apps/{appId}/test-push.
type testPushRequest struct {
	Token   *string         `json:"token"`
	UserID  json.RawMessage `json:"userId"`
	Title   *string         `json:"title"`
	Content *string         `json:"content"`
}

// testPush is what a test push is sent to and shows.
type testPush struct {
	Token, UserID string
	Content       herald.Content
}

// problems judges a test push and returns what it is sent to.
func (q testPushRequest) problems() (testPush, []herald.Detail) {
	var t testPush
	var d []herald.Detail
	hasUser := len(q.UserID) > 0 && string(q.UserID) != "null"
	switch {
	case q.Token != nil && hasUser:
		d = append(d, herald.Detail{Field: "token", Reason: "give either token or userId, not both"})
	case q.Token != nil:
		t.Token = *q.Token
		// The store cannot yet look a device up by its token.
		d = append(d, herald.Detail{Field: "token", Reason: "not supported yet: send the test push to a userId"})
	case !hasUser:
		d = append(d, herald.Detail{Field: "userId", Reason: "is required (or token)"})
	default:
		id, reason := herald.ParseUserID(q.UserID)
		if reason != "" {
			d = append(d, herald.Detail{Field: "userId", Reason: reason})
		}
		t.UserID = id
	}
	for _, f := range []struct {
		name string
		v    *string
		dst  *string
	}{{"title", q.Title, &t.Content.Title}, {"content", q.Content, &t.Content.Content}} {
		if f.v == nil || strings.TrimSpace(*f.v) == "" {
			d = append(d, herald.Detail{Field: f.name, Reason: "must be a non-empty string"})
			continue
		}
		*f.dst = *f.v
	}
	if pd, over := t.Content.PayloadProblem(); over {
		d = append(d, pd)
	}
	return t, d
}

// sendTestPush sends one push to one user through the whole pipeline,
// like POST /api/push/v2/users, but charges nothing. The app must be
// registered and have FCM credentials, as on the Server API.
func (s *server) sendTestPush(ctx context.Context, a herald.App, t testPush) (string, error) {
	switch {
	case !a.Registered:
		return "", herald.ErrAppNotFound
	case len(a.FCMCredentials) == 0:
		return "", herald.ErrNoFCM
	}
	now := s.Now()
	p := herald.Push{
		ID: herald.NewID("push_", now), AppID: a.ID, Kind: herald.KindUsers, Status: herald.StatusSending,
		Content: t.Content, CreatedAt: now.UTC().Truncate(time.Millisecond), RequestedUsers: 1,
		ServerActionsHalf: 0, // a test push is not charged
	}
	p.Marketing = herald.IsMarketingTitle(p.Content.Title)
	id, _, err := s.Pushes.Accept(ctx, p, []herald.Recipient{{UserID: t.UserID}}, nil)
	return id, err
}

// testPushHandler is POST /admin/v1/apps/{appId}/test-push.
func (s *server) testPushHandler(w http.ResponseWriter, r *http.Request) {
	a, ok := s.app(w, r)
	if !ok {
		return
	}
	var q testPushRequest
	if err := decode(r, &q); err != nil {
		web.Error(w, r, err)
		return
	}
	t, details := q.problems()
	if len(details) > 0 {
		web.Error(w, r, herald.Invalid(details...))
		return
	}
	id, err := s.sendTestPush(r.Context(), a, t)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, map[string]string{"pushId": id})
}
