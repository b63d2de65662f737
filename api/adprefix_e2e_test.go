package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"
)

// wantAdPrefixRefusal checks a 400 that names the (광고) rule on field.
func wantAdPrefixRefusal(t *testing.T, r testenv.Response, field string) {
	t.Helper()
	var body struct {
		Code    string
		Details []struct{ Field, Reason string }
	}
	if err := json.Unmarshal(r.Body, &body); err != nil || r.Status != http.StatusBadRequest || body.Code != "ERR-AB-VAL-00" {
		t.Fatalf("got %d %s, want 400 ERR-AB-VAL-00", r.Status, r.Body)
	}
	if len(body.Details) != 1 || body.Details[0].Field != field || !strings.Contains(body.Details[0].Reason, "must start with (광고)") ||
		!strings.Contains(body.Details[0].Reason, "options.isMarketing") {
		t.Errorf("details: got %+v, want one on %s naming the (광고) rule", body.Details, field)
	}
}

// TestAdPrefixRule: a push marked options.isMarketing must have a title
// starting with "(광고)" on every push endpoint, and a scheduled one keeps
// it when edited, until the app turns the check off; history says which
// rule made each push marketing.
func TestAdPrefixRule(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "ad-", "u1")
	marketing := map[string]any{"isMarketing": true}
	refused := []struct {
		path, field string
		body        map[string]any
	}{
		{"/api/push/v2/users", "title", map[string]any{"userIds": []any{"u1"}, "title": "Sale", "content": "c", "options": marketing}},
		{"/api/push/v2/topics", "title", map[string]any{"topic": "news", "title": " Sale (광고)", "content": "c", "options": marketing}},
		{"/api/push/v2/all", "title", map[string]any{"title": "[광고] Sale", "content": "c", "options": marketing}},
		{"/api/push/v2/messages", "messages[1].title", map[string]any{"messages": []any{
			map[string]any{"userId": "u1", "title": "(광고) one", "content": "c"},
			map[string]any{"userId": "u1", "title": "two", "content": "c"},
		}, "options": marketing}},
	}
	for _, tt := range refused {
		wantAdPrefixRefusal(t, e.ServerDo("POST", tt.path, a.Keys(), tt.body), tt.field)
	}
	if n := len(e.PushList(a)); n != 0 || e.Usage(a) != 0 {
		t.Errorf("after refusals: got %d pushes and %v Server Actions, want none", n, e.Usage(a))
	}

	rules := map[string]string{}
	for _, tt := range []struct{ title, rule string }{
		{"(광고) Sale", "isMarketing"}, {"(광고) Sale", ""}, {"Receipt", ""},
	} {
		body := map[string]any{"userIds": []any{"u1"}, "title": tt.title, "content": "c"}
		if tt.rule == "isMarketing" {
			body["options"] = marketing
		}
		r := e.ServerDo("POST", "/api/push/v2/users", a.Keys(), body)
		if r.Status != http.StatusOK {
			t.Fatalf("push %q: got %d %s", tt.title, r.Status, r.Body)
		}
		rules[r.Header.Get("X-Push-Id")] = tt.rule
	}
	var list struct {
		Pushes []struct {
			PushID        string
			Marketing     bool
			MarketingRule *string
		}
	}
	e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/pushes", nil, &list)
	wantRules := []string{"", "adPrefix", "isMarketing"} // newest first
	for i, p := range list.Pushes {
		got := ""
		if p.MarketingRule != nil {
			got = *p.MarketingRule
		}
		if i >= len(wantRules) || got != wantRules[i] || p.Marketing != (got != "") {
			t.Errorf("push %d: got marketing %v rule %q, want rule %q", i, p.Marketing, got, wantRules[min(i, 2)])
		}
	}

	t.Run("ScheduledEditKeepsThePrefix", func(t *testing.T) {
		at := time.Now().In(testenv.Seoul).Add(2 * time.Hour).Format("2006-01-02T15:04")
		r := e.ServerDo("POST", "/api/push/v2/users", a.Keys(), map[string]any{"userIds": []any{"u1"}, "title": "(광고) Later", "content": "c",
			"options": map[string]any{"isMarketing": true, "scheduleTime": at}})
		if r.Status != http.StatusOK {
			t.Fatalf("schedule: got %d %s", r.Status, r.Body)
		}
		id := r.Header.Get("X-Push-Id")
		code := e.AdminJSON("PATCH", "/admin/v1/pushes/"+id, map[string]any{"title": "Later"}, nil)
		if code != http.StatusBadRequest || e.Push(id).Status != "scheduled" {
			t.Errorf("edit dropping the prefix: got %d, want 400 and the push unchanged", code)
		}
		if code := e.AdminJSON("PATCH", "/admin/v1/pushes/"+id, map[string]any{"title": "(광고) Sooner"}, nil); code != http.StatusOK {
			t.Errorf("edit keeping the prefix: got %d, want 200", code)
		}
	})

	t.Run("CheckOff", func(t *testing.T) {
		e.PatchApp(a, map[string]any{"adPrefixCheck": false})
		var app struct{ AdPrefixCheck *bool }
		if e.AdminJSON("GET", "/admin/v1/apps/"+a.ID, nil, &app); app.AdPrefixCheck == nil || *app.AdPrefixCheck {
			t.Errorf("app: got adPrefixCheck %v, want false", app.AdPrefixCheck)
		}
		r := e.ServerDo("POST", "/api/push/v2/users", a.Keys(), map[string]any{"userIds": []any{"u1"}, "title": "Sale", "content": "(광고) in the body", "options": marketing})
		if r.Status != http.StatusOK {
			t.Fatalf("with the check off: got %d %s, want 200", r.Status, r.Body)
		}
		if p := e.Push(r.Header.Get("X-Push-Id")); !p.Marketing {
			t.Errorf("push: got %+v, want marketing", p)
		}
	})
}
