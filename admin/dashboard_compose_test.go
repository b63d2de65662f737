package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
)

var composeKey = regexp.MustCompile(`name="key" value="([^"]+)"`)

// pushCount is how many pushes the app of appPath has.
func (e *dashEnv) pushCount(t *testing.T, appPath string) int {
	t.Helper()
	ps, _, err := e.db.Pushes(context.Background(), strings.TrimPrefix(appPath, "/apps/"), herald.PushFilter{Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	return len(ps)
}

// TestDashboardCompose: the compose form is judged as the Server API
// judges its body; its review names the users reached and the cost, and
// sends nothing; the confirmed post sends the push once however often it
// is posted.
func TestDashboardCompose(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	appPath, _, _ := withScheduledApp(t, e, b)
	e.register(t, appPath, "d1", "tok-1", "u1")
	e.register(t, appPath, "d2", "tok-2", "u2")
	e.register(t, appPath, "d3", "tok-3", "")
	if _, err := e.db.SubscribeTopic(context.Background(), strings.TrimPrefix(appPath, "/apps/"), "news", []string{"u1"}); err != nil {
		t.Fatal(err)
	}
	_, body := b.get(appPath + "/compose")
	wantIn(t, "compose page", body, `id="compose"`, `id="target-users"`, `id="compose-when"`, `name="csrf"`)
	before := e.pushCount(t, appPath)
	compose := func(t *testing.T, form url.Values) (*http.Response, string) {
		t.Helper()
		form.Set("csrf", b.csrf(appPath+"/compose"))
		return b.with(t).post(appPath+"/compose", form)
	}
	users := url.Values{"target": {"users"}, "userIds": {"u1\nu2, u1\nghost\n"}, "title": {"Hello"}, "content": {"World"}}

	resp, body := compose(t, users)
	wantStatus(t, resp, body, http.StatusOK)
	wantIn(t, "review", body, `id="review-users">3<`, `id="review-actions">1.5<`, "Sent at once.", `id="confirm-send"`)
	if n := e.pushCount(t, appPath); n != before {
		t.Fatalf("after the review: got %d pushes, want %d (nothing sent)", n, before)
	}
	key := composeKey.FindStringSubmatch(body)[1]
	back := url.Values{"edit": {"yes"}, "key": {key}}
	for k, v := range users {
		back[k] = v
	}
	resp, body = compose(t, back)
	wantStatus(t, resp, body, http.StatusOK)
	wantIn(t, "back to the form", body, `id="compose"`, "u1\nu2, u1\nghost", `value="Hello"`)

	t.Run("ErrNoCSRF", func(t *testing.T) {
		form := url.Values{"confirmed": {"yes"}, "key": {key}, "target": {"users"}, "userIds": {"u1"}, "title": {"T"}, "content": {"c"}}
		resp, body := b.with(t).post(appPath+"/compose", form)
		if resp.StatusCode != http.StatusForbidden || e.pushCount(t, appPath) != before {
			t.Fatalf("confirmed without CSRF: got %d, want 403 and nothing sent:\n%s", resp.StatusCode, body)
		}
	})

	confirmed := url.Values{"confirmed": {"yes"}, "key": {key}}
	for k, v := range users {
		confirmed[k] = v
	}
	var sent string
	for range 2 { // a double click makes one push
		resp, body = compose(t, confirmed)
		wantStatus(t, resp, body, http.StatusSeeOther)
		if to := resp.Header.Get("Location"); sent != "" && to != sent || !strings.HasPrefix(to, appPath+"/pushes/push_") {
			t.Fatalf("confirmed: got redirect to %q, want the one push's page (%q)", to, sent)
		}
		sent = resp.Header.Get("Location")
	}
	p, err := e.db.Push(context.Background(), strings.TrimPrefix(sent, appPath+"/pushes/"))
	if err != nil || p.Kind != herald.KindUsers || p.RequestedUsers != 3 || p.ServerActionsHalf != 3 || p.Content.Title != "Hello" ||
		p.Status != herald.StatusSending || e.pushCount(t, appPath) != before+1 {
		t.Fatalf("sent push: got %+v %v, want one users push to 3 users for 1.5 Server Actions", p, err)
	}
	_, body = b.get(sent)
	wantIn(t, "push page", body, "Push sent.")

	t.Run("Targets", func(t *testing.T) {
		resp, body := compose(t, url.Values{"target": {"topic"}, "topic": {"news"}, "title": {"T"}, "content": {"c"}})
		wantStatus(t, resp, body, http.StatusOK)
		wantIn(t, "topic review", body, `id="review-users">1<`, `id="review-actions">0.5<`, "subscribed to <code>news</code>")
		resp, body = compose(t, url.Values{"target": {"all"}, "title": {"T"}, "content": {"c"}})
		wantStatus(t, resp, body, http.StatusOK)
		wantIn(t, "all-users review", body, `id="review-users">3<`, "(1 of them devices without a user)", `id="review-actions">1.5<`)
	})
	t.Run("Scheduled", func(t *testing.T) {
		form := url.Values{"target": {"users"}, "userIds": {"u2"}, "title": {"Later"}, "content": {"c"}, "scheduleTime": {"2026-12-01T15:00"}}
		resp, body := compose(t, form)
		wantStatus(t, resp, body, http.StatusOK)
		wantIn(t, "scheduled review", body, "Scheduled for <strong>2026-12-01 15:00:00 KST</strong>", `id="confirm-send">Schedule the push<`)
		form.Set("confirmed", "yes")
		form.Set("key", composeKey.FindStringSubmatch(body)[1])
		resp, body = compose(t, form)
		wantStatus(t, resp, body, http.StatusSeeOther)
		p, err := e.db.Push(context.Background(), strings.TrimPrefix(resp.Header.Get("Location"), appPath+"/pushes/"))
		if err != nil || p.Status != herald.StatusScheduled || p.ScheduledAt == nil || p.ScheduledAt.In(seoul).Hour() != 15 {
			t.Fatalf("scheduled push: got %+v %v, want scheduled for 15:00 KST", p, err)
		}
	})
	t.Run("HighPriority", func(t *testing.T) {
		_, body := b.get(appPath + "/compose")
		wantIn(t, "compose page", body, `id="compose-priority" name="priority" value="high"`)
		form := url.Values{"target": {"users"}, "userIds": {"u1"}, "title": {"Your code"}, "content": {"123456"}, "priority": {"high"}}
		resp, body := compose(t, form)
		wantStatus(t, resp, body, http.StatusOK)
		wantIn(t, "high review", body, `id="review-priority">high`, `name="priority" value="high"`)
		form.Set("confirmed", "yes")
		form.Set("key", composeKey.FindStringSubmatch(body)[1])
		resp, body = compose(t, form)
		wantStatus(t, resp, body, http.StatusSeeOther)
		p, err := e.db.Push(context.Background(), strings.TrimPrefix(resp.Header.Get("Location"), appPath+"/pushes/"))
		if err != nil || p.Priority != herald.PriorityHigh {
			t.Fatalf("composed high push: got %+v %v, want priority high", p, err)
		}
		_, body = b.get(resp.Header.Get("Location"))
		wantIn(t, "push page", body, `id="push-priority">high`)
	})
	t.Run("LocalTime", func(t *testing.T) {
		_, body := b.get(appPath + "/compose")
		wantIn(t, "compose page", body, `id="compose-local" name="localTime" value="true"`)
		form := url.Values{"target": {"users"}, "userIds": {"u1"}, "title": {"Good morning"}, "content": {"c"}, "scheduleTime": {"2026-12-02T09:00"},
			"localTime": {"true"}}
		resp, body := compose(t, form)
		wantStatus(t, resp, body, http.StatusOK)
		wantIn(t, "local-time review", body, "each device gets it at <strong>2026-12-02 09:00</strong> of its own time zone",
			`name="localTime" value="true"`)
		form.Set("confirmed", "yes")
		form.Set("key", composeKey.FindStringSubmatch(body)[1])
		resp, body = compose(t, form)
		wantStatus(t, resp, body, http.StatusSeeOther)
		p, err := e.db.Push(context.Background(), strings.TrimPrefix(resp.Header.Get("Location"), appPath+"/pushes/"))
		if err != nil || !p.LocalTime || p.Status != herald.StatusScheduled || p.LocalWall().Format(herald.ScheduleLayout) != "2026-12-02T09:00" {
			t.Fatalf("composed local-time push: got %+v %v, want scheduled at 09:00 local", p, err)
		}
		_, body = b.get(resp.Header.Get("Location"))
		wantIn(t, "push page", body, `id="push-local">Each device at <strong>2026-12-02 09:00</strong>`, `id="count-late-local">0<`)
		resp, body = compose(t, url.Values{"target": {"users"}, "userIds": {"u1"}, "title": {"T"}, "content": {"c"}, "localTime": {"true"}})
		wantStatus(t, resp, body, http.StatusBadRequest)
		wantIn(t, "local time without a send time", body, "<code>options.localTime</code>")
	})
	t.Run("Spread", func(t *testing.T) {
		_, body := b.get(appPath + "/compose")
		wantIn(t, "compose page", body, `id="compose-spread" name="spreadMinutes"`)
		form := url.Values{"target": {"users"}, "userIds": {"u1"}, "title": {"Sale"}, "content": {"Today"}, "spreadMinutes": {"30"}}
		resp, body := compose(t, form)
		wantStatus(t, resp, body, http.StatusOK)
		wantIn(t, "spread review", body, `id="review-spread">its sends spread evenly over 30 minutes`, `name="spreadMinutes" value="30"`)
		form.Set("confirmed", "yes")
		form.Set("key", composeKey.FindStringSubmatch(body)[1])
		resp, body = compose(t, form)
		wantStatus(t, resp, body, http.StatusSeeOther)
		p, err := e.db.Push(context.Background(), strings.TrimPrefix(resp.Header.Get("Location"), appPath+"/pushes/"))
		if err != nil || p.SpreadMinutes != 30 {
			t.Fatalf("composed spread push: got %+v %v, want spreadMinutes 30", p, err)
		}
		_, body = b.get(resp.Header.Get("Location"))
		wantIn(t, "push page", body, `id="push-spread">over 30 minutes`)
	})
	t.Run("ErrRefusedAsTheServerAPI", func(t *testing.T) {
		before := e.pushCount(t, appPath)
		for name, c := range map[string]struct {
			form  url.Values
			field string
		}{
			"AdWithoutPrefix": {url.Values{"target": {"users"}, "userIds": {"u1"}, "title": {"Sale"}, "content": {"c"}, "isMarketing": {"true"}}, "title"},
			"NoUsers":         {url.Values{"target": {"users"}, "userIds": {" \n"}, "title": {"T"}, "content": {"c"}}, "userIds"},
			"NoContent":       {url.Values{"target": {"users"}, "userIds": {"u1"}, "title": {"T"}}, "content"},
			"TooSoon":         {url.Values{"target": {"users"}, "userIds": {"u1"}, "title": {"T"}, "content": {"c"}, "scheduleTime": {"2026-12-01T12:00"}}, "options.scheduleTime"},
			"BadTopic":        {url.Values{"target": {"topic"}, "topic": {"a b"}, "title": {"T"}, "content": {"c"}}, "topic"},
			"BadGroup":        {url.Values{"target": {"all"}, "title": {"T"}, "content": {"c"}, "requestGroupId": {"1234"}}, "options.requestGroupId"},
			"BadTarget":       {url.Values{"target": {"everyone"}, "title": {"T"}, "content": {"c"}}, "target"},
			"SpreadWord":      {url.Values{"target": {"all"}, "title": {"T"}, "content": {"c"}, "spreadMinutes": {"ten"}}, "options.spreadMinutes"},
			"SpreadOverADay":  {url.Values{"target": {"all"}, "title": {"T"}, "content": {"c"}, "spreadMinutes": {"1441"}}, "options.spreadMinutes"},
			"HighAd": {url.Values{"target": {"users"}, "userIds": {"u1"}, "title": {"(광고) Sale"}, "content": {"c"}, "isMarketing": {"true"},
				"priority": {"high"}}, "options.priority"},
		} {
			for _, step := range []string{"review", "confirmed"} {
				if step == "confirmed" {
					c.form.Set("confirmed", "yes")
					c.form.Set("key", "k-"+name)
				}
				resp, body := compose(t, c.form)
				wantStatus(t, resp, body, http.StatusBadRequest)
				wantIn(t, name+" "+step, body, "<code>"+c.field+"</code>", `id="compose"`)
			}
		}
		if n := e.pushCount(t, appPath); n != before {
			t.Errorf("after refused pushes: got %d pushes, want %d", n, before)
		}
	})
}

// TestDashboardOverviewAndUsers: the overview sums the app's recent pushes
// as GET …/overview does and lists the latest; the users page lists users
// by id, searches by prefix, pages and links each to its user page.
func TestDashboardOverviewAndUsers(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	appPath, first, second := withScheduledApp(t, e, b)
	_, body := b.get("/")
	wantIn(t, "apps list", body, `href="`+appPath+`/overview"`)
	_, body = b.get(appPath + "/overview")
	wantIn(t, "overview", body, `id="ov-pushes">2<`, `id="ov-users">2<`, `id="ov-actions">1<`, `id="ov-sent">0<`,
		`aria-current="page">7 days<`, `href="`+appPath+`/overview?days=30"`, `id="push-`+first+`"`, `id="push-`+second+`"`)
	resp, body := b.get(appPath + "/overview?days=2")
	wantStatus(t, resp, body, http.StatusBadRequest)
	wantIn(t, "overview of 2 days", body, "<code>days</code> must be 1, 7 or 30")

	for i, u := range []string{"kim-a", "kim-b", "kim-c", "lee"} {
		e.register(t, appPath, "d"+string(rune('0'+i)), "tok-"+u, u)
	}
	_, body = b.get(appPath + "/users")
	wantIn(t, "users", body, `data-user="kim-a"`, `data-user="lee"`, `href="`+appPath+`/users?userId=kim-a"`, `id="user-search"`)
	_, body = b.get(appPath + "/users?q=kim&limit=2")
	wantIn(t, "first page of kim", body, `data-user="kim-a"`, `data-user="kim-b"`, `id="next-page"`)
	if strings.Contains(body, `data-user="kim-c"`) || strings.Contains(body, `data-user="lee"`) {
		t.Errorf("first page of kim: want only kim-a and kim-b in\n%s", body)
	}
	next := regexp.MustCompile(`href="([^"]+)" id="next-page"`).FindStringSubmatch(body)[1]
	_, body = b.get(strings.ReplaceAll(next, "&amp;", "&"))
	wantIn(t, "second page of kim", body, `data-user="kim-c"`)
	if strings.Contains(body, `id="next-page"`) || strings.Contains(body, `data-user="kim-a"`) {
		t.Errorf("second page of kim: want kim-c alone and no next page in\n%s", body)
	}
	_, body = b.get(appPath + "/users?q=park")
	wantIn(t, "no match", body, `id="no-users"`)
	resp, body = b.get(appPath + "/users?limit=0")
	wantStatus(t, resp, body, http.StatusBadRequest)
	_, body = b.get(appPath + "/users?userId=kim-a")
	wantIn(t, "user page", body, `id="user-state">registered<`)
}
