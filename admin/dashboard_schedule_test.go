package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/heraldpush/herald/client"
)

// TestDashboardEditTemplatesAndLanguages: the dashboard's edit of a
// scheduled push is judged as PATCH /admin/v1/pushes/{id} judges it. A
// title or content that is not a template (an unclosed {{) is refused,
// naming it, and nothing changes; the push's localized entries are edited
// as the API's JSON, replaced when changed, removed when emptied, a bad
// entry refused naming it.
func TestDashboardEditTemplatesAndLanguages(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	a := newDashApp(t, e, b)
	e.register(t, a.path, "d1", "tok-1", "u1")
	res, err := a.c.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "Hello {{userId}}", Content: "c",
		Options: &client.Options{ScheduleTime: "2026-12-01T15:00"}, Localized: map[string]client.Text{"ko": {Title: "안녕하세요", Content: "내용"}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.PushID
	editPath := a.path + "/scheduled/" + id
	_, body := b.get(editPath)
	wantIn(t, "edit page", body, `<textarea id="localized" name="localized"`, "안녕하세요")

	post := func(form url.Values) (int, string) {
		t.Helper()
		_, page := b.get(editPath)
		form.Set("csrf", csrfField.FindStringSubmatch(page)[1])
		for k, v := range map[string]string{"title": "Hello {{userId}}", "content": "c", "scheduleTime": "2026-12-01T15:00"} {
			if !form.Has(k) {
				form.Set(k, v)
			}
		}
		if !form.Has("localized") {
			form.Set("localized", `{"ko": {"title": "안녕하세요", "content": "내용"}}`)
		}
		resp, body := b.post(editPath, form)
		return resp.StatusCode, body
	}
	entries := func() string {
		t.Helper()
		p, err := e.db.Push(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		var langs []string
		for _, l := range p.Localized {
			langs = append(langs, l.Lang+":"+l.Title)
		}
		return p.Content.Title + " | " + strings.Join(langs, ",")
	}
	for _, c := range []struct {
		form  url.Values
		field string
	}{
		{url.Values{"title": {"Hello {{userId"}}, "title"},
		{url.Values{"content": {"}} c"}}, "content"},
		{url.Values{"localized": {`{"ko": {"title": "{{tag.", "content": "c"}}`}}, "localized.ko.title"},
		{url.Values{"localized": {`{"ko": 1}`}}, "localized.ko"},
		{url.Values{"localized": {`not json`}}, "localized"},
	} {
		status, body := post(c.form)
		if status != http.StatusBadRequest || !strings.Contains(body, c.field) {
			t.Errorf("edit %v: got %d, want 400 naming %s:\n%s", c.form, status, c.field, body)
		}
		if got := entries(); got != "Hello {{userId}} | ko:안녕하세요" {
			t.Errorf("after the refused edit %v: got %q, want it unchanged", c.form, got)
		}
	}
	if status, body := post(url.Values{"localized": {`{"ja": {"title": "こんにちは {{userId}}", "content": "内容"}}`}}); status != http.StatusSeeOther {
		t.Fatalf("edit the entries: got %d:\n%s", status, body)
	}
	if got := entries(); got != "Hello {{userId}} | ja:こんにちは {{userId}}" {
		t.Errorf("after the edit of the entries: got %q", got)
	}
	if status, body := post(url.Values{"localized": {"  "}}); status != http.StatusSeeOther {
		t.Fatalf("empty the entries: got %d:\n%s", status, body)
	}
	if got := entries(); got != "Hello {{userId}} | " {
		t.Errorf("after emptying the entries: got %q, want none", got)
	}
}
