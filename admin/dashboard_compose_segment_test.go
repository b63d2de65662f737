package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/client"
)

// segmentApp makes an app of the compose tests with three users and a
// device each plus a device without a user: u1 and u2 on the gold plan,
// u3 on silver. It returns the app's path and id.
func segmentApp(t *testing.T, e *dashEnv, b *browser) (string, string) {
	t.Helper()
	appPath, _, _ := withScheduledApp(t, e, b)
	appID := strings.TrimPrefix(appPath, "/apps/")
	ctx := context.Background()
	for _, u := range []string{"u1", "u2", "u3"} {
		e.register(t, appPath, "d-"+u, "tok-"+u, u)
	}
	e.register(t, appPath, "d-anon", "tok-anon", "")
	for user, plan := range map[string]string{"u1": "gold", "u2": "gold", "u3": "silver"} {
		v := audience.String(plan)
		if _, err := e.db.SetTags(ctx, appID, user, map[string]*audience.Value{"plan": &v}); err != nil {
			t.Fatal(err)
		}
	}
	return appPath, appID
}

// TestDashboardComposeSegment: the compose page sends to a filter or to a
// saved segment; the review counts the users and devices it selects now
// and what they cost; the push is stored as a segment push with the
// filter as accepted; a bad filter is refused naming its node, as the
// Server API names it, and sends nothing.
func TestDashboardComposeSegment(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	appPath, appID := segmentApp(t, e, b)
	ctx := context.Background()
	gold, _ := audience.Parse(json.RawMessage(`{"tag":"plan","eq":"gold"}`))
	now := e.clock.Now().UTC()
	if err := e.db.CreateSegment(ctx, audience.Segment{ID: "seg_gold", AppID: appID, Name: "Gold members", Filter: gold, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}

	_, body := b.get(appPath + "/compose")
	wantIn(t, "compose page", body, `id="target-segment"`, `<option value="seg_gold">Gold members</option>`, `id="compose-filter"`, `id="filter-builder"`)
	compose := func(t *testing.T, form url.Values) (*http.Response, string) {
		t.Helper()
		form.Set("csrf", b.csrf(appPath+"/compose"))
		return b.with(t).post(appPath+"/compose", form)
	}
	send := func(t *testing.T, form url.Values) herald.Push {
		t.Helper()
		resp, body := compose(t, form)
		wantStatus(t, resp, body, http.StatusOK)
		form.Set("confirmed", "yes")
		form.Set("key", composeKey.FindStringSubmatch(body)[1])
		resp, body = compose(t, form)
		wantStatus(t, resp, body, http.StatusSeeOther)
		p, err := e.db.Push(ctx, strings.TrimPrefix(resp.Header.Get("Location"), appPath+"/pushes/"))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	t.Run("Filter", func(t *testing.T) {
		filter := `{"or": [{"tag": "plan", "eq": "silver"}, {"field": "platform", "eq": "ios"}]}`
		form := url.Values{"target": {"segment"}, "filter": {filter}, "segmentId": {""}, "title": {"Silver week"}, "content": {"c"}}
		resp, body := compose(t, form)
		wantStatus(t, resp, body, http.StatusOK)
		wantIn(t, "review of a filter", body, `id="review-users">1<`, `id="review-devices">1<`, "the filter selects now",
			`id="review-actions">0.5<`, `id="review-filter">{&#34;or&#34;:[{&#34;tag&#34;:&#34;plan&#34;,&#34;eq&#34;:&#34;silver&#34;}`)
		before := e.pushCount(t, appPath)
		p := send(t, form)
		if p.Kind != herald.KindSegment || p.SegmentID != "" || !strings.Contains(string(p.Filter), `"silver"`) || e.pushCount(t, appPath) != before+1 {
			t.Fatalf("sent push: got kind %s, segment %q, filter %s; want a segment push with the filter", p.Kind, p.SegmentID, p.Filter)
		}
	})
	t.Run("SavedSegment", func(t *testing.T) {
		form := url.Values{"target": {"segment"}, "segmentId": {"seg_gold"}, "filter": {"ignored when a segment is chosen"}, "title": {"Gold week"}, "content": {"c"}}
		resp, body := compose(t, form)
		wantStatus(t, resp, body, http.StatusOK)
		wantIn(t, "review of a segment", body, `id="review-users">2<`, `id="review-devices">2<`,
			`of the segment <strong id="review-segment">Gold members</strong>`, `id="review-actions">1<`)
		p := send(t, form)
		if p.Kind != herald.KindSegment || p.SegmentID != "seg_gold" || string(p.Filter) != `{"tag":"plan","eq":"gold"}` {
			t.Fatalf("sent push: got kind %s, segment %q, filter %s; want the segment's push with its filter", p.Kind, p.SegmentID, p.Filter)
		}
	})
	t.Run("ErrRefused", func(t *testing.T) {
		before := e.pushCount(t, appPath)
		for _, c := range []struct{ name, filter, segment, field string }{
			{"no filter", "", "", "filter"},
			{"not JSON", "{plan = gold", "", "filter"},
			{"a bad node", `{"and": [{"tag": "plan", "eq": "gold"}, {"field": "colour", "eq": "red"}]}`, "", "filter.and[1].field"},
			{"an unknown segment", "", "seg_nope", "segmentId"},
		} {
			resp, body := compose(t, url.Values{"target": {"segment"}, "filter": {c.filter}, "segmentId": {c.segment}, "title": {"T"}, "content": {"c"}})
			wantStatus(t, resp, body, http.StatusBadRequest)
			wantIn(t, c.name, body, "<code>"+c.field+"</code>", `id="compose"`)
		}
		if n := e.pushCount(t, appPath); n != before {
			t.Fatalf("after refused forms: got %d pushes, want %d", n, before)
		}
	})
}

// TestDashboardAudienceCount: the compose page's live count answers JSON
// as the admin API's count does: the users and devices of a filter or a
// saved segment, a refused filter naming its node, and nothing without
// the session's form token.
func TestDashboardAudienceCount(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	appPath, appID := segmentApp(t, e, b)
	ctx := context.Background()
	all, _ := audience.Parse(json.RawMessage(`{"field":"platform","eq":"android"}`))
	now := e.clock.Now().UTC()
	if err := e.db.CreateSegment(ctx, audience.Segment{ID: "seg_android", AppID: appID, Name: "Android", Filter: all, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	csrf := b.csrf(appPath + "/compose")
	count := func(form url.Values) (int, map[string]any) {
		t.Helper()
		form.Set("csrf", csrf)
		resp, body := b.post(appPath+"/audience/count", form)
		var got map[string]any
		if err := json.Unmarshal([]byte(body), &got); err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("count %v: got %d %q (%v), want JSON", form, resp.StatusCode, body, err)
		}
		return resp.StatusCode, got
	}
	for _, c := range []struct {
		form           url.Values
		users, devices float64
	}{
		{url.Values{"filter": {`{"tag":"plan","eq":"gold"}`}}, 2, 2},
		{url.Values{"filter": {`{"not":{"tag":"plan","exists":true}}`}}, 1, 1}, // the device without a user
		{url.Values{"segmentId": {"seg_android"}}, 4, 4},
	} {
		code, got := count(c.form)
		if code != http.StatusOK || got["users"] != c.users || got["devices"] != c.devices {
			t.Errorf("count %v: got %d %v, want %v users and %v devices", c.form, code, got, c.users, c.devices)
		}
		if at, err := time.Parse(time.RFC3339Nano, got["countedAt"].(string)); err != nil || !at.Equal(now.Truncate(time.Millisecond)) {
			t.Errorf("count %v: countedAt %v (%v), want the clock's %v", c.form, got["countedAt"], err, now)
		}
	}
	for _, c := range []struct {
		form  url.Values
		field string
	}{
		{url.Values{"filter": {`{"tag":"plan","eq":"gold","ne":"x"}`}}, "filter"},
		{url.Values{"filter": {`{"and":[{"tag":"plan","prefix":3}]}`}}, "filter.and[0].prefix"},
		{url.Values{"filter": {`[`}}, "filter"},
		{url.Values{"segmentId": {"seg_nope"}}, "segmentId"},
	} {
		code, got := count(c.form)
		raw, _ := json.Marshal(got)
		if code != http.StatusBadRequest || !strings.Contains(string(raw), `"field":"`+c.field) {
			t.Errorf("count %v: got %d %s, want 400 naming %s", c.form, code, raw, c.field)
		}
	}
	resp, body := b.post(appPath+"/audience/count", url.Values{"filter": {`{"tag":"plan","eq":"gold"}`}})
	if resp.StatusCode != http.StatusForbidden || strings.Contains(body, `"users"`) {
		t.Errorf("count without the form token: got %d %q, want 403 and no count", resp.StatusCode, body)
	}
}

// TestDashboardPushPageLanguages: a push's page lists its localized
// entries, and a segment push's page its filter and segment; the edit
// page of a scheduled push holds its entries to edit.
func TestDashboardPushPageLanguages(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	a := newDashApp(t, e, b)
	e.register(t, a.path, "d1", "tok-1", "u1")
	gold := audience.String("gold")
	if _, err := e.db.SetTags(context.Background(), a.app.ID, "u1", map[string]*audience.Value{"plan": &gold}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := a.c.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "Hello", Content: "c",
		Options:   &client.Options{ScheduleTime: "2026-12-01T15:00"},
		Localized: map[string]client.Text{"ko": {Title: "안녕하세요", Content: "내용"}, "ja": {Title: "こんにちは", Content: "内容"}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.PushID
	_, body := b.get(a.path + "/pushes/" + id)
	wantIn(t, "push page", body, `id="push-localized"`, `<tr data-lang="ja">`, "안녕하세요", "内容")
	_, body = b.get(a.path + "/scheduled/" + id)
	wantIn(t, "edit page", body, `<textarea id="localized" name="localized"`, `&#34;ja&#34;: {`, "こんにちは")

	if res, err = a.c.PushSegment(ctx, client.PushSegmentRequest{Filter: []byte(`{"tag": "plan", "eq": "gold"}`), Title: "Gold", Content: "c"}); err != nil {
		t.Fatal(err)
	}
	id = res.PushID
	_, body = b.get(a.path + "/pushes/" + id)
	wantIn(t, "segment push page", body, `id="push-filter">{&#34;tag&#34;:&#34;plan&#34;,&#34;eq&#34;:&#34;gold&#34;}<`)
}
