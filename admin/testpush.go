package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/request"
	"github.com/heraldpush/herald/web"
)

// maxTokenLen is the longest token a test push takes, as the SDK API's
// registerPushToken does.
const maxTokenLen = 4096

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
		switch {
		case strings.TrimSpace(*q.Token) == "":
			d = append(d, herald.Detail{Field: "token", Reason: "must be a non-empty string"})
		case utf8.RuneCountInString(*q.Token) > maxTokenLen:
			d = append(d, herald.Detail{Field: "token", Reason: fmt.Sprintf("must be at most %d characters", maxTokenLen)})
		}
		t.Token = *q.Token
	case !hasUser:
		d = append(d, herald.Detail{Field: "userId", Reason: "is required (or token)"})
	default:
		id, reason := request.ParseUserID(q.UserID)
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

// sendTestPush sends one push through the whole pipeline, but charges
// nothing: to one user like POST /api/push/v2/users, or to the device that
// holds a token when it fans out. The app must pass the Server API's gate
// (herald.PushGate: registered, with FCM credentials), herald.NewPush
// makes it as the Server API's pushes (an ad with its footer), and a
// device must be there to send to (ErrNoDevice): a test with nowhere to go
// would pass in silence.
func (s *server) sendTestPush(ctx context.Context, a herald.App, t testPush) (string, error) {
	req := herald.PushRequest{Kind: herald.KindUsers, Content: t.Content, Recipients: []herald.Recipient{{UserID: t.UserID}}, Test: true}
	if t.Token != "" {
		req.Kind, req.Token, req.Recipients = herald.KindToken, t.Token, nil
	}
	if err := herald.PushGate(a); err != nil {
		return "", err
	}
	p, err := herald.NewPush(a, req, s.Now())
	if err != nil {
		return "", err
	}
	// Refused as a request (400) before the state it meets (404), as the
	// Server API orders its answers.
	if err := s.testPushReaches(ctx, a.ID, t); err != nil {
		return "", err
	}
	id, _, err := s.Delivery.Accept(ctx, p, req.Recipients, nil)
	if err == nil && t.UserID != "" {
		access.NoteOf(ctx).ShowedUsers(t.UserID)
	}
	return id, err
}

// testPushReaches returns ErrNoDevice, naming the member, when no device
// holds the token, or the user (never registered, withdrawn, or with every
// device gone) has none.
func (s *server) testPushReaches(ctx context.Context, appID string, t testPush) error {
	if t.Token != "" {
		_, err := s.Store.DeviceByToken(ctx, appID, t.Token)
		if errors.Is(err, herald.ErrNotFound) {
			return herald.NoDevice("token", "no device of this app holds this token")
		}
		return err
	}
	_, devices, err := s.Store.User(ctx, appID, t.UserID)
	switch {
	case errors.Is(err, herald.ErrUserNotFound):
		return herald.NoDevice("userId", "no user with this ID was ever registered in this app")
	case err != nil:
		return err
	case len(devices) == 0:
		return herald.NoDevice("userId", "the user has no device (withdrawn, or every device removed)")
	}
	return nil
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
