package retention_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
)

// day is a day of the injected clock.
const day = 24 * time.Hour

// runDay runs the node's retention until the day's run has ended.
func runDay(t *testing.T, e *testenv.Harness) {
	t.Helper()
	for range 100 {
		done, err := e.Node.Retention.Tick(context.Background())
		if err != nil {
			t.Fatalf("retention tick: %v", err)
		}
		if done {
			return
		}
	}
	t.Fatal("retention: the day's run did not end in 100 ticks")
}

// pushView is the admin push JSON as retention changes it.
type pushView struct {
	PushID, Status   string
	Title, Content   *string
	LinkURL          *string
	Expired          bool
	Counts           map[string]int
	UnreachableUsers []struct{ UserID string }
	Failures         []struct{ UserID string }
	Messages         []struct{ UserID string }
	Edits            []struct{ Changes map[string]string }
}

func getPush(t *testing.T, e *testenv.Harness, id string) pushView {
	t.Helper()
	var p pushView
	if code := e.AdminJSON("GET", "/admin/v1/pushes/"+id, nil, &p); code != http.StatusOK {
		t.Fatalf("get push %s: got %d, want 200", id, code)
	}
	return p
}

// rows counts a push's rows in each table retention empties.
func rows(t *testing.T, e *testenv.Harness, id string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"deliveries", "push_chunks", "chunk_user_blooms", "push_events", "unreachable", "user_pushes"} {
		var n int
		if err := e.QueryRow(`SELECT COUNT(*) FROM `+table+` WHERE push_id = ?`, id).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		out[table] = n
	}
	return out
}

// TestRetentionExpiresFinishedPushes: once a push finished longer ago than
// the retention (400 days), the day's run clears its body and deletes its
// rows (deliveries, chunks, events, unreachable users, per-user
// messages, its expired idempotency key); its record and counts stay and its JSON says expired, title
// and content null. A push finished within the retention and a scheduled
// one are untouched. The run is logged in one line and counted in the
// metrics.
func TestRetentionExpiresFinishedPushes(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	t0 := time.Now()
	clk.Run(t0)
	e := testenv.Start(t, testenv.Clocked(clk))
	ctx := context.Background()
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1", "u2")
	e.Register(a, "unregistered-", "gone") // a delivery row and an unreachable user

	old, err := a.Client.PushUsers(client.WithIdempotencyKey(ctx, "old-key"), client.PushUsersRequest{UserIDs: []any{"u1", "u2", "gone", "ghost"},
		Title: "old title", Content: "old content", LinkURL: "https://example.com/old", Options: &client.Options{RequestGroupID: "old-group"}})
	if err != nil {
		t.Fatal(err)
	}
	oldMessages, err := a.Client.PushMessages(ctx, client.PushMessagesRequest{Messages: []client.Message{
		{UserID: "u1", Title: "for u1", Content: "secret one"}, {UserID: "u2", Title: "for u2", Content: "secret two"}}})
	if err != nil {
		t.Fatal(err)
	}
	e.WaitFinal(old.PushID, 10*time.Second)
	e.WaitFinal(oldMessages.PushID, 10*time.Second)
	if r, err := a.Client.ReportEvents(ctx, "dev-u1-0", []client.Event{{PushID: old.PushID, Type: "opened"}}); err != nil || r.Accepted != 1 {
		t.Fatalf("report opened: got %+v, %v; want 1 accepted", r, err)
	}
	before := getPush(t, e, old.PushID)
	beforeRows := rows(t, e, old.PushID)
	for table, n := range beforeRows {
		// PostgreSQL finds the users of a chunk's slots by the chunk's
		// filter (migration 47), SQLite by user_pushes: either table may
		// hold none of the push's.
		if n == 0 && table != "user_pushes" && table != "chunk_user_blooms" {
			t.Fatalf("old push before retention: no rows in %s (%v), want some to delete", table, beforeRows)
		}
	}
	var keys int
	if err := e.QueryRow(`SELECT COUNT(*) FROM idempotency WHERE app_id = ?`, a.ID).Scan(&keys); err != nil || keys != 1 {
		t.Fatalf("idempotency keys: got %d (%v), want 1", keys, err)
	}
	var group struct{ Counts map[string]int }
	e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/push-groups/old-group", nil, &group)

	// 300 days on, a push that stays within the retention, and one
	// scheduled far ahead.
	clk.Run(t0.Add(300 * day))
	recent, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1", "gone"}, Title: "recent title", Content: "recent"})
	if err != nil {
		t.Fatal(err)
	}
	e.WaitFinal(recent.PushID, 10*time.Second)
	sendAt := t0.Add(600 * day).In(testenv.Seoul)
	scheduled, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "later", Content: "later",
		Options: &client.Options{ScheduleTime: sendAt.Format("2006-01-02T15:04")}})
	if err != nil {
		t.Fatal(err)
	}
	recentRows := rows(t, e, recent.PushID)

	clk.Run(t0.Add(410 * day))
	runDay(t, e)

	p := getPush(t, e, old.PushID)
	if !p.Expired || p.Title != nil || p.Content != nil || p.LinkURL != nil || p.Status != "done" {
		t.Errorf("old push: got expired %v, title %v, content %v, link %v, status %s; want expired, title, content and link null, done",
			p.Expired, p.Title, p.Content, p.LinkURL, p.Status)
	}
	if fmt.Sprint(p.Counts) != fmt.Sprint(before.Counts) {
		t.Errorf("old push counts: got %v, want them kept: %v", p.Counts, before.Counts)
	}
	if p.Counts["sent"] != 2 || p.Counts["unreachable"] != 2 || p.Counts["opened"] != 1 {
		t.Errorf("old push counts: got %v, want 2 sent, 2 unreachable, 1 opened", p.Counts)
	}
	if len(p.UnreachableUsers)+len(p.Failures) != 0 {
		t.Errorf("old push: got unreachable %v and failures %v, want none kept", p.UnreachableUsers, p.Failures)
	}
	for table, n := range rows(t, e, old.PushID) {
		if n != 0 {
			t.Errorf("old push: %d rows left in %s, want none", n, table)
		}
	}
	var g struct{ Counts map[string]int }
	e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/push-groups/old-group", nil, &g)
	if fmt.Sprint(g.Counts) != fmt.Sprint(group.Counts) {
		t.Errorf("request group: got %v, want its counts kept: %v", g.Counts, group.Counts)
	}
	m := getPush(t, e, oldMessages.PushID)
	if !m.Expired || len(m.Messages) != 0 || m.Counts["sent"] != 2 {
		t.Errorf("old /messages push: got expired %v, %d messages, counts %v; want expired, no messages, 2 sent", m.Expired, len(m.Messages), m.Counts)
	}
	page := dashboardPage(t, e, "/apps/"+a.ID+"/pushes/"+oldMessages.PushID)
	if strings.Contains(page, "secret one") || !strings.Contains(page, `id="push-expired"`) {
		t.Errorf("dashboard page of the expired /messages push: got a message's content, or no word that it expired:\n%s", page)
	}

	r := getPush(t, e, recent.PushID)
	if r.Expired || r.Title == nil || *r.Title != "recent title" || len(r.UnreachableUsers) != 1 {
		t.Errorf("recent push: got expired %v, title %v, unreachable %v; want kept whole", r.Expired, r.Title, r.UnreachableUsers)
	}
	if got := rows(t, e, recent.PushID); fmt.Sprint(got) != fmt.Sprint(recentRows) {
		t.Errorf("recent push rows: got %v, want %v", got, recentRows)
	}
	s := getPush(t, e, scheduled.PushID)
	if s.Expired || s.Status != "scheduled" || s.Title == nil || *s.Title != "later" {
		t.Errorf("scheduled push: got expired %v, status %s, title %v; want kept, scheduled", s.Expired, s.Status, s.Title)
	}

	if err := e.QueryRow(`SELECT COUNT(*) FROM idempotency WHERE app_id = ?`, a.ID).Scan(&keys); err != nil || keys != 0 {
		t.Errorf("idempotency keys left: got %d (%v), want the expired one deleted", keys, err)
	}

	var list struct{ Pushes []pushView }
	e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/pushes", nil, &list)
	expired := map[string]bool{}
	for _, p := range list.Pushes {
		expired[p.PushID] = p.Expired
	}
	if !expired[old.PushID] || !expired[oldMessages.PushID] || expired[recent.PushID] || expired[scheduled.PushID] {
		t.Errorf("history list: got expired %v, want the two old pushes only", expired)
	}

	if !strings.Contains(e.Log.String(), `msg="retention run"`) || !strings.Contains(e.Log.String(), "push_bodies=2") {
		t.Errorf("log: got no line \"retention run\" with push_bodies=2 in\n%s", e.Log.String())
	}
	metrics := scrape(t, e)
	for _, want := range []string{`herald_retention_deleted_total{kind="push_bodies"} 2`, `herald_retention_deleted_total{kind="unreachable"} 2`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics: got no line %q", want)
		}
	}

	// The day's run is made once: another tick the same day does nothing.
	if done, err := e.Node.Retention.Tick(ctx); !done || err != nil {
		t.Errorf("a second tick the same day: got (%v, %v), want (true, nil)", done, err)
	}
}

func scrape(t *testing.T, e *testenv.Harness) string {
	t.Helper()
	resp, err := http.Get(e.Admin.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// consentChange is one entry of GET …/consent-history.
type consentChange struct {
	At       time.Time
	DeviceID *string
}

// TestRetentionConsentTrail: the consent trail keeps each pair's latest
// record whatever its age, and every record made within 730 days; older
// records of a pair that changed since are deleted.
func TestRetentionConsentTrail(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	t0 := time.Now()
	clk.Run(t0)
	e := testenv.Start(t, testenv.Clocked(clk))
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true})
	e.Device(a, "dev-1", "tok-1", "android", "1.6.0", "churn")
	e.Device(a, "dev-2", "tok-2", "android", "1.6.0", "still")
	consent := func(user string, marketing bool) {
		t.Helper()
		body := map[string]any{"userId": user, "state": map[string]bool{"marketing": marketing}}
		if r := e.ServerDo("PATCH", "/api/app-user/v2/marketing", a.Keys(), body); r.Status != http.StatusOK {
			t.Fatalf("consent of %s: got %d %s", user, r.Status, r.Body)
		}
	}
	history := func(user string) []time.Time {
		t.Helper()
		var out struct{ Changes []consentChange }
		if code := e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/users/"+user+"/consent-history", nil, &out); code != http.StatusOK {
			t.Fatalf("consent history of %s: got %d", user, code)
		}
		var ats []time.Time
		for _, c := range out.Changes {
			if c.DeviceID == nil { // the user's own pair
				ats = append(ats, c.At.Truncate(day))
			}
		}
		return ats
	}
	// "still" decided once, long ago; "churn" decided three times: long
	// ago, within the two years, and lately.
	consent("still", true)
	consent("churn", true)
	clk.Run(t0.Add(day))
	consent("churn", false)
	clk.Run(t0.Add(200 * day))
	consent("churn", true)
	clk.Run(t0.Add(800 * day))
	consent("churn", false)
	wantStill, wantChurn := history("still"), history("churn")[2:]
	if len(wantStill) != 1 || len(history("churn")) != 4 {
		t.Fatalf("before retention: got %v and %v, want one and four records", history("still"), history("churn"))
	}

	clk.Run(t0.Add(801 * day))
	runDay(t, e)
	if got := history("still"); !slices.Equal(got, wantStill) {
		t.Errorf("still: got %v, want its only record kept, 801 days old: %v", got, wantStill)
	}
	if got := history("churn"); !slices.Equal(got, wantChurn) {
		t.Errorf("churn: got %v, want the records of the last 730 days: %v", got, wantChurn)
	}
	if !strings.Contains(e.Log.String(), "consent_records=4") {
		t.Errorf("log: got no retention line with consent_records=4 in\n%s", e.Log.String())
	}
}

// dashboardPage signs in to the dashboard and reads a page.
func dashboardPage(t *testing.T, e *testenv.Harness, path string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	resp, err := hc.PostForm(e.Admin.URL+"/login", url.Values{"token": {e.AdminToken}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = hc.Get(e.Admin.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: got %d, want 200:\n%s", path, resp.StatusCode, b)
	}
	return string(b)
}

// TestRetentionPrunesAccessRecords: the day's run deletes the access
// records older than 730 days from the chain's start, and the chain still
// verifies from the anchor it keeps; younger records stay.
func TestRetentionPrunesAccessRecords(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	t0 := time.Now()
	clk.Run(t0)
	e := testenv.Start(t, testenv.Clocked(clk))
	type list struct {
		Records []struct {
			Seq   int64
			Route string
		}
	}
	for range 3 { // three records, 731 days before the run
		if code := e.AdminJSON("GET", "/admin/v1/apps", nil, nil); code != http.StatusOK {
			t.Fatalf("list apps: %d", code)
		}
	}
	clk.Run(t0.Add(700 * day))
	e.AdminJSON("GET", "/admin/v1/operators", nil, nil) // 31 days before the run: kept
	var before list
	e.AdminJSON("GET", "/admin/v1/access-records?limit=1000", nil, &before)

	clk.Run(t0.Add(731 * day))
	runDay(t, e)

	var after list
	e.AdminJSON("GET", "/admin/v1/access-records?limit=1000", nil, &after)
	var routes []string
	for _, r := range after.Records {
		routes = append(routes, r.Route)
	}
	if len(after.Records) == 0 || after.Records[0].Route != "GET /admin/v1/operators" || slices.Contains(routes, "GET /admin/v1/apps") {
		t.Errorf("records after the run: %v; want those of 731 days ago gone, from GET /admin/v1/operators on (before: %d records)", routes, len(before.Records))
	}
	var verdict struct {
		OK      bool
		Records int
	}
	if code := e.AdminJSON("GET", "/admin/v1/access-records/verify", nil, &verdict); code != http.StatusOK || !verdict.OK {
		t.Errorf("verify after pruning: %d %+v, want ok from the kept anchor", code, verdict)
	}
}
