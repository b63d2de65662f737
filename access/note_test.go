package access

import (
	"fmt"
	"slices"
	"testing"

	"github.com/heraldpush/herald"
)

// TestAccessNoteUsers: a note lists at most 200 users and counts all;
// a push's rows list each user once.
func TestAccessNoteUsers(t *testing.T) {
	n := &Note{}
	for i := range 250 {
		n.ShowedUsers(fmt.Sprint("u", i))
	}
	if len(n.userIDs) != MaxUserIDs || n.users != 250 || n.userIDs[199] != "u199" {
		t.Errorf("250 users: listed %d (last %s), counted %d; want 200 and 250", len(n.userIDs), n.userIDs[len(n.userIDs)-1], n.users)
	}
	p := &Note{}
	p.PushRows([]herald.Unreachable{{UserID: "a"}, {UserID: "b"}}, []herald.Failure{{UserID: "b"}, {UserID: ""}}, []string{"c", "a"})
	if !slices.Equal(p.userIDs, []string{"a", "b", "c"}) || p.users != 3 {
		t.Errorf("push rows: %v (%d), want [a b c] (3)", p.userIDs, p.users)
	}
	var none *Note
	none.ShowedUsers("x") // a request not recorded: no note, no panic
}
