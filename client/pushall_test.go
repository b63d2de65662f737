package client_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/heraldpush/herald/client"
)

// TestPushAll: POST /api/push/v2/all with both keys, the body as the
// Server API reads it, and the answer and push id read back.
func TestPushAll(t *testing.T) {
	t.Parallel()
	c, got := newServer(t, answer{status: 200, header: map[string]string{"X-Push-Id": "push_03"}, body: `"Push has been requested to be sent."`})
	res, err := c.PushAll(context.Background(), client.PushAllRequest{
		Title: "t", Content: "c", LinkURL: "https://l", Options: &client.Options{RequestGroupID: "g"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := (client.PushResult{Message: "Push has been requested to be sent.", PushID: "push_03"}); res != want {
		t.Errorf("got %+v, want %+v", res, want)
	}
	req := <-got
	if req.method != "POST" || req.path != "/api/push/v2/all" {
		t.Errorf("got %s %s, want POST /api/push/v2/all", req.method, req.path)
	}
	checkHeaders(t, req.header, true)
	if want := decodeJSON(t, `{"title":"t","content":"c","linkURL":"https://l","options":{"requestGroupId":"g"}}`); !reflect.DeepEqual(req.body, want) {
		t.Errorf("body: got %v, want %v", req.body, want)
	}
}

// TestPushSegment: POST /api/push/v2/segments carries the filter as given
// and the localized entries.
func TestPushSegment(t *testing.T) {
	t.Parallel()
	c, got := newServer(t, answer{status: 200, header: map[string]string{"X-Push-Id": "push_04"}, body: `"Push has been requested to be sent."`})
	res, err := c.PushSegment(context.Background(), client.PushSegmentRequest{
		Filter: []byte(`{"and":[{"tag":"plan","eq":"gold"},{"field":"platform","eq":"android"}]}`),
		Title:  "t", Content: "c", Localized: map[string]client.Text{"ko": {Title: "제목", Content: "내용"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.PushID != "push_04" {
		t.Errorf("push id: got %q, want push_04", res.PushID)
	}
	req := <-got
	if req.method != "POST" || req.path != "/api/push/v2/segments" {
		t.Errorf("got %s %s, want POST /api/push/v2/segments", req.method, req.path)
	}
	want := decodeJSON(t, `{"filter":{"and":[{"tag":"plan","eq":"gold"},{"field":"platform","eq":"android"}]},
		"title":"t","content":"c","localized":{"ko":{"title":"제목","content":"내용"}}}`)
	if !reflect.DeepEqual(req.body, want) {
		t.Errorf("body: got %v, want %v", req.body, want)
	}
}
