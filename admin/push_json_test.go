package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
)

// adminCall sends an admin API request with the admin token and decodes the
// answer into out, failing unless the status is 200.
func (e *dashEnv) adminCall(t *testing.T, method, path string, out any) {
	t.Helper()
	res := testenv.Send(t, http.DefaultClient, e.admin.URL, testenv.Request{Method: method, URL: e.admin.URL + path,
		Header: map[string]string{"Authorization": "Bearer " + testenv.AdminToken}})
	if res.Status != http.StatusOK {
		t.Fatalf("%s %s: got %d %s, want 200", method, path, res.Status, res.Body)
	}
	res.Decode(t, out)
}

// TestPushJSONNetServerActions: a cancelled scheduled push, refunded in
// the usage, shows serverActions 0 in its detail, in both lists and in
// its group's sum; the push still scheduled keeps its charge.
func TestPushJSONNetServerActions(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	a := newDashApp(t, e, b)
	ctx := context.Background()
	schedule := func(title string) string {
		t.Helper()
		res, err := a.c.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1", "u2"}, Title: title, Content: "c",
			Options: &client.Options{ScheduleTime: "2026-12-01T15:00", RequestGroupID: "sale-01"}})
		if err != nil {
			t.Fatal(err)
		}
		return res.PushID
	}
	kept, cancelled := schedule("Kept"), schedule("Cancelled")
	var answer struct {
		Status        string
		ServerActions float64
	}
	e.adminCall(t, http.MethodPost, "/admin/v1/pushes/"+cancelled+"/cancel", &answer)
	if answer.Status != "cancelled" || answer.ServerActions != 0 {
		t.Errorf("cancel answer: got %s with %v Server Actions, want cancelled with 0 (refunded)", answer.Status, answer.ServerActions)
	}
	var usage struct{ TotalServerActions float64 }
	e.adminCall(t, http.MethodGet, "/admin/v1/apps/"+a.app.ID+"/usage?from=2026-12-01&to=2026-12-01", &usage)
	if usage.TotalServerActions != 2 { // newDashApp's two scheduled pushes, 0.5 each, and the kept one
		t.Fatalf("usage: got %v, want 2 (the cancelled push refunded)", usage.TotalServerActions)
	}

	want := map[string]float64{kept: 1, cancelled: 0}
	for id, w := range want {
		var detail struct{ ServerActions float64 }
		e.adminCall(t, http.MethodGet, "/admin/v1/pushes/"+id, &detail)
		if detail.ServerActions != w {
			t.Errorf("detail of %s: got %v Server Actions, want %v", id, detail.ServerActions, w)
		}
	}
	var list struct {
		Pushes []struct {
			PushID        string
			ServerActions float64
		}
	}
	e.adminCall(t, http.MethodGet, "/admin/v1/apps/"+a.app.ID+"/pushes?requestGroupId=sale-01", &list)
	if len(list.Pushes) != 2 {
		t.Fatalf("history: got %d pushes, want 2", len(list.Pushes))
	}
	for _, p := range list.Pushes {
		if p.ServerActions != want[p.PushID] {
			t.Errorf("history, %s: got %v Server Actions, want %v", p.PushID, p.ServerActions, want[p.PushID])
		}
	}
	var group struct{ ServerActions float64 }
	e.adminCall(t, http.MethodGet, "/admin/v1/apps/"+a.app.ID+"/push-groups/sale-01", &group)
	if group.ServerActions != 1 {
		t.Errorf("group sum: got %v Server Actions, want 1 (as the usage)", group.ServerActions)
	}
}

// TestPushJSONMessages: the detail of a /messages push lists each user's
// message as the dashboard shows it; a push with one content for all has
// messages null.
func TestPushJSONMessages(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	a := newDashApp(t, e, b)
	ctx := context.Background()
	res, err := a.c.PushMessages(ctx, client.PushMessagesRequest{Messages: []client.Message{
		{UserID: "u1", Title: "Hello Ann", Content: "Your table is ready.", LinkURL: "https://example.com/t/1"},
		{UserID: 42, Title: "Hello Bo", Content: "Soon.", ImageURL: "https://example.com/t.png"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var detail struct {
		Title, Content string
		Messages       json.RawMessage
	}
	e.adminCall(t, http.MethodGet, "/admin/v1/pushes/"+res.PushID, &detail)
	want := `[{"userId":"u1","title":"Hello Ann","content":"Your table is ready.","linkURL":"https://example.com/t/1","imageURL":null},` +
		`{"userId":"42","title":"Hello Bo","content":"Soon.","linkURL":null,"imageURL":"https://example.com/t.png"}]`
	if string(detail.Messages) != want {
		t.Errorf("messages: got %s, want %s", detail.Messages, want)
	}
	if _, body := b.get(a.path + "/pushes/" + res.PushID); !contains(body, "Hello Ann", "Hello Bo") {
		t.Errorf("the dashboard's push page lacks the messages the JSON lists")
	}

	one, err := a.c.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "t", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	e.adminCall(t, http.MethodGet, "/admin/v1/pushes/"+one.PushID, &detail)
	if string(detail.Messages) != "null" {
		t.Errorf("messages of a users push: got %s, want null", detail.Messages)
	}
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !containsAny(s, sub) {
			return false
		}
	}
	return true
}
