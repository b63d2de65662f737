package access

import (
	"context"
	"net/http"
	"sync"

	"github.com/heraldpush/herald"
)

// Note is what a handler tells the access record of its request
// (DESIGN 11) beyond what the request itself says: whose data the answer
// showed or the request changed, the app and push it was about, and, for a
// sign-in, who signed in or which email was typed. The access-record
// middleware puts one in each recorded request's context and writes the
// record from it once the handler is done.
type Note struct {
	mu       sync.Mutex
	signedIn bool
	operator herald.Operator // who signed in; zero when it failed
	email    string          // the typed email of a sign-in
	appID    string
	pushID   string
	userIDs  []string
	users    int
	reason   string
	// actor is who made an authenticated request (Authenticated notes
	// it); nil until then.
	actor *herald.Operator
	// flush writes the record with the status given and lets the answer
	// out (the middleware's, see Recorder.Wrap).
	flush func(status int) error
	// intent writes the request's intent (see Intend); intentID is the
	// intent written, which the request's record completes.
	intent   func() error
	intentID string
}

// maxUsers is how many userIds a record lists; userCount counts all.
const maxUsers = MaxUserIDs

type noteKey struct{}

// With returns r carrying a fresh note, and the note.
func With(r *http.Request) (*http.Request, *Note) {
	n := &Note{}
	return r.WithContext(context.WithValue(r.Context(), noteKey{}, n)), n
}

// NoteOf returns the note of the request's context; nil (which every
// method takes) when the request is not recorded.
func NoteOf(ctx context.Context) *Note {
	n, _ := ctx.Value(noteKey{}).(*Note)
	return n
}

// ShowedUsers notes users whose data the answer showed or the request
// changed.
func (n *Note) ShowedUsers(ids ...string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.users += len(ids)
	room := maxUsers - len(n.userIDs)
	n.userIDs = append(n.userIDs, ids[:min(room, len(ids))]...)
}

// ShowedSomeUsers notes, for an answer recorded before it is all read (a
// stream), the first users it shows and how many it shows in all.
func (n *Note) ShowedSomeUsers(count int, first ...string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.users += max(count, len(first))
	room := maxUsers - len(n.userIDs)
	n.userIDs = append(n.userIDs, first[:min(room, len(first))]...)
}

// About notes the app and push the request was about, when its route does
// not name them (an app created, a push found by ID).
func (n *Note) About(appID, pushID string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if appID != "" {
		n.appID = appID
	}
	if pushID != "" {
		n.pushID = pushID
	}
}

// SignIn notes a sign-in attempt: the email typed, and the operator when
// it succeeded (zero when it failed).
func (n *Note) SignIn(email string, o herald.Operator) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.signedIn, n.email, n.operator = true, email, o
}

// DownloadReason notes the reason given for a download of personal data.
func (n *Note) DownloadReason(reason string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.reason = reason
}

// Authenticated notes who made the request.
func (n *Note) Authenticated(o herald.Operator) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.actor = &o
}

// Intend records, before a request that may change something acts, that
// it is about to: its intent, durable before the change is made
// (Store.RecordIntent). Without a note it does nothing.
func (n *Note) Intend() error {
	if n == nil || n.intent == nil {
		return nil
	}
	return n.intent()
}

// intended notes the intent written for the request.
func (n *Note) intended(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.intentID = id
}

// RecordNow writes the record before the answer is complete, with the
// status the answer will have, and lets what the handler writes from
// then on go straight out: for a stream (records first, then the
// stream). Without a note (a request not recorded) it does nothing.
func (n *Note) RecordNow(status int) error {
	if n == nil || n.flush == nil {
		return nil
	}
	return n.flush(status)
}

// PushRows notes the users of a push's per-user rows an answer showed
// (unreachable users, failed sends, per-user messages), each once.
func (n *Note) PushRows(unreachable []herald.Unreachable, failures []herald.Failure, messaged []string) {
	seen := map[string]bool{}
	var ids []string
	add := func(id string) {
		if id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, u := range unreachable {
		add(u.UserID)
	}
	for _, f := range failures {
		add(f.UserID)
	}
	for _, id := range messaged {
		add(id)
	}
	n.ShowedUsers(ids...)
}

// SignedIn reports the sign-in noted: ok when one was, with the email
// typed and the operator's ID ("" when it failed).
func (n *Note) SignedIn() (email, operatorID string, ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.email, n.operator.ID, n.signedIn
}
