package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

// webhookEvents reads an app's webhookEvents through GET.
func webhookEvents(t *testing.T, env *testenv.Env, id string) []string {
	t.Helper()
	res := env.AdminDo(t, http.MethodGet, "/admin/v1/apps/"+id, nil)
	var a struct {
		WebhookEvents []string `json:"webhookEvents"`
	}
	res.Decode(t, &a)
	if res.Status != http.StatusOK || a.WebhookEvents == nil {
		t.Fatalf("get app: got %d %s, want 200 with webhookEvents", res.Status, res.Body)
	}
	return a.WebhookEvents
}

// TestAppWebhookEvents: an app takes push.undeliverable and
// consent.changed unless it sets its list on create or patch, which
// replaces it (the empty list too); an unknown type, a repeat or anything
// but an array of strings is refused with 400 naming the member, and
// changes nothing.
func TestAppWebhookEvents(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.CreateApp(t, map[string]any{"name": "plain"})
	if got := webhookEvents(t, env, a.ID); !slices.Equal(got, []string{"push.undeliverable", "consent.changed"}) {
		t.Errorf("default: got %v", got)
	}
	res := env.AdminDo(t, http.MethodPost, "/admin/v1/apps", map[string]any{"name": "streams", "webhookEvents": []string{"push.sent"}})
	var created struct{ AppID string }
	if res.Decode(t, &created); res.Status != http.StatusCreated || !slices.Equal(webhookEvents(t, env, created.AppID), []string{"push.sent"}) {
		t.Fatalf("create with [push.sent]: got %d %s", res.Status, res.Body)
	}
	path := "/admin/v1/apps/" + a.ID
	all := []string{"push.opened", "push.received", "push.failed", "push.sent", "consent.changed", "push.undeliverable"}
	if res := env.AdminDo(t, http.MethodPatch, path, map[string]any{"webhookEvents": all}); res.Status != http.StatusOK {
		t.Fatalf("patch every type: got %d %s", res.Status, res.Body)
	}
	if got := webhookEvents(t, env, a.ID); !slices.Equal(got, all) {
		t.Errorf("after patch: got %v, want %v", got, all)
	}
	if res := env.AdminDo(t, http.MethodPatch, path, map[string]any{"name": "renamed"}); res.Status != http.StatusOK ||
		!slices.Equal(webhookEvents(t, env, a.ID), all) {
		t.Errorf("patch without the list: got %d, want 200 and the list kept", res.Status)
	}
	for _, tc := range []struct {
		name, body, field string
	}{
		{"ErrUnknown", `{"webhookEvents":["push.sent","push.clicked"]}`, "webhookEvents[1]"},
		{"ErrCase", `{"webhookEvents":["PUSH.SENT"]}`, "webhookEvents[0]"},
		{"ErrRepeat", `{"webhookEvents":["push.sent","push.opened","push.sent"]}`, "webhookEvents[2]"},
		{"ErrString", `{"webhookEvents":"push.sent"}`, "webhookEvents"},
		{"ErrObject", `{"webhookEvents":{"push.sent":true}}`, "webhookEvents"},
		{"ErrNumber", `{"webhookEvents":[1]}`, "webhookEvents"},
		{"ErrNullMember", `{"webhookEvents":[null]}`, "webhookEvents[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := testenv.WantError(t, env.AdminDo(t, http.MethodPatch, path, []byte(tc.body)), path, herald.ErrInvalidRequest)
			if len(got.Details) != 1 || got.Details[0].Field != tc.field {
				t.Errorf("details: got %+v, want one on %s", got.Details, tc.field)
			}
			body := strings.Replace(tc.body, "{", `{"name":"x",`, 1)
			testenv.WantError(t, env.AdminDo(t, http.MethodPost, "/admin/v1/apps", []byte(body)), "/admin/v1/apps", herald.ErrInvalidRequest)
		})
	}
	if got := webhookEvents(t, env, a.ID); !slices.Equal(got, all) {
		t.Errorf("after refused patches: got %v, want %v unchanged", got, all)
	}
	if res := env.AdminDo(t, http.MethodPatch, path, map[string]any{"webhookEvents": []string{}}); res.Status != http.StatusOK {
		t.Fatalf("patch []: got %d %s", res.Status, res.Body)
	}
	if got := webhookEvents(t, env, a.ID); len(got) != 0 {
		t.Errorf("after []: got %v, want none", got)
	}
}

// TestDashboardWebhookEvents: the app page lists every webhook event
// type, the app's checked, and its form replaces the list.
func TestDashboardWebhookEvents(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	a := newDashApp(t, e, b)
	_, body := b.get(a.path)
	wantIn(t, "app page", body, `id="webhook-events"`, `value="push.undeliverable" checked`, `value="push.sent">`)
	b.submit(a.path, a.path+"/settings", url.Values{"webhookEvents.form": {"1"}, "webhookEvents": {"push.sent", "push.opened"}})
	got, _ := e.db.App(context.Background(), a.app.ID)
	if want := []herald.WebhookEvent{herald.WebhookSent, herald.WebhookOpened}; !slices.Equal(got.WebhookEvents, want) {
		t.Errorf("after the form: got %v, want %v", got.WebhookEvents, want)
	}
}
