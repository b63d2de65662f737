package admin

import (
	"context"
	"net/http"
	"sync"

	"github.com/heraldpush/herald"
)

// accessNote is what a handler tells the access record of its request
// (DESIGN 11) beyond what the request itself says: whose data the answer
// showed or the request changed, the app and push it was about, and, for a
// sign-in, who signed in or which email was typed. The access-record
// middleware puts one in each recorded request's context and writes the
// record from it once the handler is done.
type accessNote struct {
	mu       sync.Mutex
	signedIn bool
	operator herald.Operator // who signed in; zero when it failed
	email    string          // the typed email of a sign-in
	appID    string
	pushID   string
	userIDs  []string
	users    int
	reason   string
}

// maxNotedUsers is how many userIds a record lists; userCount counts all.
const maxNotedUsers = 200

type accessNoteKey struct{}

// withAccessNote returns r carrying a fresh note, and the note.
func withAccessNote(r *http.Request) (*http.Request, *accessNote) {
	n := &accessNote{}
	return r.WithContext(context.WithValue(r.Context(), accessNoteKey{}, n)), n
}

// noteOf returns the note of the request's context; nil (which every
// method takes) when the request is not recorded.
func noteOf(ctx context.Context) *accessNote {
	n, _ := ctx.Value(accessNoteKey{}).(*accessNote)
	return n
}

// showedUsers notes users whose data the answer showed or the request
// changed.
func (n *accessNote) showedUsers(ids ...string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.users += len(ids)
	room := maxNotedUsers - len(n.userIDs)
	n.userIDs = append(n.userIDs, ids[:min(room, len(ids))]...)
}

// about notes the app and push the request was about, when its route does
// not name them (an app created, a push found by ID).
func (n *accessNote) about(appID, pushID string) {
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

// signIn notes a sign-in attempt: the email typed, and the operator when
// it succeeded (zero when it failed).
func (n *accessNote) signIn(email string, o herald.Operator) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.signedIn, n.email, n.operator = true, email, o
}

// downloadReason notes the reason given for a download of personal data.
func (n *accessNote) downloadReason(reason string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.reason = reason
}
