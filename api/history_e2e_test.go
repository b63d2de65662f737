package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"

	"github.com/heraldpush/herald/client"
)

// TestPushGroupMergesHistory: pushes sharing a requestGroupId are one
// history entry with summed counts and charge.
func TestPushGroupMergesHistory(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1", "u2", "u3")
	opts := &client.Options{RequestGroupID: "spring-sale"}
	first, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1", "u2", "ghost"}, Title: "t", Content: "c", Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	second, err := a.Client.PushMessages(context.Background(), client.PushMessagesRequest{
		Messages: []client.Message{{UserID: "u3", Title: "t3", Content: "c3"}}, Options: opts,
	})
	if err != nil {
		t.Fatal(err)
	}
	other, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "t", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{first.PushID, second.PushID, other.PushID} {
		e.WaitFinal(id, 10*time.Second)
	}
	var g struct {
		RequestGroupID string
		PushIDs        []string
		ServerActions  float64
		Counts         struct{ RequestedUsers, Sent, Unreachable int }
	}
	if code := e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/push-groups/spring-sale", nil, &g); code != http.StatusOK {
		t.Fatalf("push group: got %d, want 200", code)
	}
	if len(g.PushIDs) != 2 || g.PushIDs[0] != first.PushID || g.PushIDs[1] != second.PushID {
		t.Fatalf("push ids: got %v, want [%s %s]", g.PushIDs, first.PushID, second.PushID)
	}
	if g.ServerActions != 2 || g.Counts.RequestedUsers != 4 || g.Counts.Sent != 3 || g.Counts.Unreachable != 1 {
		t.Fatalf("merged entry: got %v SA and %+v, want 2 SA, 4 requested, 3 sent, 1 unreachable", g.ServerActions, g.Counts)
	}
	var list struct{ Pushes []testenv.PushView }
	e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/pushes?requestGroupId=spring-sale", nil, &list)
	if len(list.Pushes) != 2 {
		t.Fatalf("history filtered by group: got %d pushes, want 2", len(list.Pushes))
	}
	if code := e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/push-groups/no-such-group", nil, nil); code != http.StatusNotFound {
		t.Fatalf("unknown group: got %d, want 404", code)
	}
}
