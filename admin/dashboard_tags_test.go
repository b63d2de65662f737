package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/audience"
)

// TestDashboardUserTags: the user page lists a user's tags in a form
// whose rows change a value or its kind, delete a tag and add new ones;
// a refused form names the tag as the admin API does and changes nothing;
// a withdrawn user's tags cannot be set.
func TestDashboardUserTags(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	appPath := b.submit("/", "/apps", url.Values{"name": {"Tags"}, "tier": {"business"}, "timeZone": {"Asia/Seoul"}})
	appID := strings.TrimPrefix(appPath, "/apps/")
	ctx := context.Background()
	locale, zone := "ko-KR", "Asia/Seoul"
	for _, u := range []string{"u1", "u2"} {
		if _, err := e.db.RegisterDevice(ctx, appID, herald.DeviceRegistration{DeviceID: "d-" + u, Token: "t-" + u,
			Platform: herald.PlatformAndroid, AppSourceVersion: "1.6.0", UserID: &u, Locale: &locale, TimeZone: &zone}); err != nil {
			t.Fatal(err)
		}
	}
	plan, points := audience.String("gold"), audience.Number(120)
	if _, err := e.db.SetTags(ctx, appID, "u1", map[string]*audience.Value{"plan": &plan, "points": &points}); err != nil {
		t.Fatal(err)
	}
	tagsOf := func(user string) audience.Tags {
		t.Helper()
		tags, err := e.db.UserTags(ctx, appID, user)
		if err != nil {
			t.Fatal(err)
		}
		return tags
	}

	userPage := appPath + "/users?userId=u1"
	_, body := b.get(userPage)
	wantIn(t, "user page", body, `id="tags-form"`, `data-tag="plan"`, `data-tag="points"`, `value="gold"`, `value="120"`,
		`id="new-tag-2"`, `<td data-label="Language">ko-KR</td>`, `<td data-label="Time zone">Asia/Seoul</td>`)

	// plan becomes a number, points is deleted, vip and city are new.
	form := url.Values{"userId": {"u1"},
		"tagName":   {"plan", "points", "vip", "city", ""},
		"tagKind":   {"number", "number", "boolean", "string", "string"},
		"tagValue":  {" 3 ", "120", "true", "서울", ""},
		"tagStored": {"plan", "points"}, "tagDelete": {"points"}}
	to := b.submit(userPage, appPath+"/users/tags", form)
	_, body = b.get(to)
	wantIn(t, "user page after the form", body, "Tags of user u1 saved.", `data-tag="vip"`, `data-tag="city"`, `value="서울"`)
	want := audience.Tags{"plan": audience.Number(3), "vip": audience.Bool(true), "city": audience.String("서울")}
	if got := tagsOf("u1"); !sameTags(got, want) {
		t.Errorf("tags after the form: got %v, want %v", got, want)
	}

	refused := []struct {
		name  string
		form  url.Values
		field string
	}{
		{"not a number", url.Values{"tagName": {"plan"}, "tagKind": {"number"}, "tagValue": {"three"}, "tagStored": {"plan"}}, "tags.plan"},
		{"not a boolean", url.Values{"tagName": {"vip"}, "tagKind": {"boolean"}, "tagValue": {"yes"}, "tagStored": {"vip"}}, "tags.vip"},
		{"bad name", url.Values{"tagName": {"two words"}, "tagKind": {"string"}, "tagValue": {"x"}}, "tags.two words"},
		{"named twice", url.Values{"tagName": {"city", "city"}, "tagKind": {"string", "string"}, "tagValue": {"a", "b"}}, "tags.city"},
		{"a value without a name", url.Values{"tagName": {""}, "tagKind": {"string"}, "tagValue": {"orphan"}}, "tags"},
		{"nothing to do", url.Values{"tagName": {""}, "tagKind": {"string"}, "tagValue": {""}}, "tags"},
		{"an unknown kind", url.Values{"tagName": {"x"}, "tagKind": {"date"}, "tagValue": {"1"}}, "tags.x"},
		// One bad row refuses the whole form: the good row is not applied.
		{"one good row, one bad", url.Values{"tagName": {"ok", "plan"}, "tagKind": {"string", "number"}, "tagValue": {"fine", "NaN"}}, "tags.plan"},
	}
	for _, c := range refused {
		c.form.Set("userId", "u1")
		c.form.Set("csrf", b.csrf(userPage))
		resp, body := b.post(appPath+"/users/tags", c.form)
		wantStatus(t, resp, body, http.StatusBadRequest)
		wantIn(t, c.name, body, "<code>"+c.field+"</code>", `id="tags-form"`)
		if got := tagsOf("u1"); !sameTags(got, want) {
			t.Errorf("%s: tags changed to %v", c.name, got)
		}
	}

	if err := e.db.WithdrawUser(ctx, appID, "u2"); err != nil {
		t.Fatal(err)
	}
	_, body = b.get(appPath + "/users?userId=u2")
	wantIn(t, "withdrawn user's page", body, "Withdrawn: the user's tags were deleted.")
	if strings.Contains(body, `id="tags-form"`) {
		t.Errorf("withdrawn user's page offers the tags form")
	}
	resp, body := b.post(appPath+"/users/tags", url.Values{"csrf": {b.csrf(userPage)}, "userId": {"u2"},
		"tagName": {"plan"}, "tagKind": {"string"}, "tagValue": {"gold"}})
	wantStatus(t, resp, body, http.StatusGone)
	if got := tagsOf("u2"); len(got) != 0 {
		t.Errorf("withdrawn user: got tags %v, want none", got)
	}
}

func sameTags(a, b audience.Tags) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !v.Equal(w) {
			return false
		}
	}
	return true
}
