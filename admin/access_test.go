package admin_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
)

// accessPage is the answer of GET /admin/v1/access-records.
type accessPage struct {
	Records    []access.Record `json:"records"`
	NextCursor *string         `json:"nextCursor"`
}

// records lists every record (query added to the list's), page by page.
func (e *env) records(query string) []access.Record {
	e.T.Helper()
	var all []access.Record
	cursor := ""
	for {
		var p accessPage
		path := "/admin/v1/access-records?limit=1000&" + query
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if code := e.AdminJSON(http.MethodGet, path, nil, &p); code != http.StatusOK {
			e.T.Fatalf("GET %s: %d", path, code)
		}
		all = append(all, p.Records...)
		if p.NextCursor == nil {
			return all
		}
		cursor = *p.NextCursor
	}
}

// verdict is GET /admin/v1/access-records/verify.
func (e *env) verdict() access.Verdict {
	e.T.Helper()
	var v access.Verdict
	if code := e.AdminJSON(http.MethodGet, "/admin/v1/access-records/verify", nil, &v); code != http.StatusOK {
		e.T.Fatalf("verify: %d", code)
	}
	return v
}

// exec runs a statement on the node's database behind the store's back.
func (e *env) exec(query string) {
	e.T.Helper()
	db := e.Node.DB.JobsDB()
	if e.DB != nil {
		db = e.DB.Writer // SQLite's jobs handle is read-only
	}
	if _, err := db.Exec(query); err != nil {
		e.T.Fatalf("%s: %v", query, err)
	}
}

// adminBrowser is a browser on the node's admin listener.
func (e *env) adminBrowser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: e.T, base: e.Admin.URL, hc: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// call makes an admin API request with header (nil: none) and returns
// its status.
func (e *env) call(method, path string, header map[string]string) int {
	e.T.Helper()
	req, _ := http.NewRequest(method, e.Admin.URL+path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.T.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// wantRecord fails unless rec is route answered status by actor ("" for
// none) about appID, listing users.
func wantRecord(t *testing.T, rec access.Record, route string, status int, actor, appID string, users ...string) {
	t.Helper()
	got := ""
	if rec.Actor != nil {
		got = *rec.Actor
	}
	if users == nil {
		users = []string{}
	}
	if rec.Route != route || rec.Status != status || got != actor || rec.AppID != appID ||
		!slices.Equal(rec.UserIDs, users) || rec.UserCount != len(users) || rec.IP != "127.0.0.1" {
		t.Errorf("record %d: got %s %d actor %q app %q users %v (%d) ip %q;\nwant %s %d actor %q app %q users %v",
			rec.Seq, rec.Route, rec.Status, got, rec.AppID, rec.UserIDs, rec.UserCount, rec.IP, route, status, actor, appID, users)
	}
}

// TestAccessRecordsOfASession scripts an operator's session through the
// admin API and the dashboard and reads back the records it left: one per
// authenticated request and sign-in attempt, with its route, actor,
// status, app and users; none for a refused token, health checks or
// static files. The chain verifies, the filters and cursor select.
func TestAccessRecordsOfASession(t *testing.T) {
	e := start(t)
	a := e.NewAppWithoutFCM(map[string]any{"name": "Shop", "tier": "business", "appUserEnabled": true})
	e.Register(a, "tok-", "alice", "bob")
	app := "/admin/v1/apps/" + a.ID
	e.AdminJSON(http.MethodGet, app+"/users", nil, nil)
	e.AdminJSON(http.MethodGet, app+"/users/alice", nil, nil)
	e.AdminJSON(http.MethodGet, app+"/users/nobody", nil, nil)
	e.AdminJSON(http.MethodPatch, app+"/users/bob/consent", map[string]any{"marketing": true, "marketingNight": false}, nil)
	e.AdminJSON(http.MethodGet, app+"/users/bob/consent-history", nil, nil)
	if code := e.call(http.MethodGet, app, map[string]string{"Authorization": "Bearer wrong"}); code != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d, want 401", code)
	}
	e.call(http.MethodGet, "/healthz", nil)
	e.call(http.MethodGet, "/openapi.yaml", nil)

	b := e.adminBrowser()
	resp, body := b.post("/login", url.Values{"token": {"not the token"}})
	wantStatus(t, resp, body, http.StatusUnauthorized)
	b.login()
	resp, body = b.get("/apps/" + a.ID + "/users?userId=alice")
	wantStatus(t, resp, body, http.StatusOK)
	resp, body = b.get("/dashboard.css")
	wantStatus(t, resp, body, http.StatusOK)

	recs := e.records("")
	want := []struct {
		route  string
		status int
		actor  string
		app    string
		users  []string
	}{
		{"POST /admin/v1/apps", 201, "owner", a.ID, nil},
		{"GET /admin/v1/apps/{appId}/users", 200, "owner", a.ID, []string{"alice", "bob"}},
		{"GET /admin/v1/apps/{appId}/users/{userId}", 200, "owner", a.ID, []string{"alice"}},
		{"GET /admin/v1/apps/{appId}/users/{userId}", 404, "owner", a.ID, nil},
		{"PATCH /admin/v1/apps/{appId}/users/{userId}/consent", 200, "owner", a.ID, []string{"bob"}},
		{"GET /admin/v1/apps/{appId}/users/{userId}/consent-history", 200, "owner", a.ID, []string{"bob"}},
		{"POST /login", 401, "", "", nil},
		{"POST /login", 303, "owner", "", nil},
		{"GET /apps/{appId}/users", 200, "owner", a.ID, []string{"alice"}},
	}
	if len(recs) != len(want) {
		for _, r := range recs {
			t.Logf("record %d: %s %d", r.Seq, r.Route, r.Status)
		}
		t.Fatalf("got %d records, want %d", len(recs), len(want))
	}
	for i, w := range want {
		wantRecord(t, recs[i], w.route, w.status, w.actor, w.app, w.users...)
		if recs[i].Seq != int64(i+1) {
			t.Errorf("record %d: seq %d", i+1, recs[i].Seq)
		}
	}
	if v := e.verdict(); !v.OK || v.Records != int64(len(want)+1) || v.FirstBroken != nil {
		t.Errorf("verify: got %+v, want ok over %d records (those above and the list's)", v, len(want)+1)
	}

	t.Run("Filters", func(t *testing.T) {
		routes := func(query string) []string {
			var out []string
			for _, r := range e.records(query) {
				out = append(out, fmt.Sprintf("%d %s", r.Seq, r.Route))
			}
			return out
		}
		if got := routes("userId=bob"); !slices.Equal(got, []string{"2 GET /admin/v1/apps/{appId}/users",
			"5 PATCH /admin/v1/apps/{appId}/users/{userId}/consent", "6 GET /admin/v1/apps/{appId}/users/{userId}/consent-history"}) {
			t.Errorf("userId=bob: %v", got)
		}
		if got := routes("appId=" + a.ID + "&actor=owner&from=" + url.QueryEscape(recs[8].At.Format("2006-01-02T15:04:05.999Z07:00"))); len(got) != 1 || got[0] != "9 GET /apps/{appId}/users" {
			t.Errorf("appId, actor and from the dashboard page: %v", got)
		}
		if got := routes("actor=op_nobody"); len(got) != 0 {
			t.Errorf("another actor: %v", got)
		}
		var p accessPage
		e.AdminJSON(http.MethodGet, "/admin/v1/access-records?limit=4", nil, &p)
		if len(p.Records) != 4 || p.NextCursor == nil {
			t.Fatalf("limit=4: %d records, cursor %v", len(p.Records), p.NextCursor)
		}
		var next accessPage
		e.AdminJSON(http.MethodGet, "/admin/v1/access-records?limit=4&cursor="+*p.NextCursor, nil, &next)
		if len(next.Records) != 4 || next.Records[0].Seq != 5 {
			t.Errorf("the next page: %d records from %d, want 4 from 5", len(next.Records), next.Records[0].Seq)
		}
		var bad struct{ Details []herald.Detail }
		if code := e.AdminJSON(http.MethodGet, "/admin/v1/access-records?limit=0&from=yesterday&to=2026-01-01&cursor=x", nil, &bad); code != http.StatusBadRequest {
			t.Errorf("bad parameters: %d, want 400", code)
		}
		var fields []string
		for _, d := range bad.Details {
			fields = append(fields, d.Field)
		}
		if !slices.Equal(fields, []string{"from", "to", "limit"}) {
			t.Errorf("bad parameters named %v, want from, to, limit", fields)
		}
	})
}

// TestAccessRecordsJSONL downloads the records as JSON lines: only with a
// reason, which the download's own record keeps, written before the
// stream (so the stream ends with it).
func TestAccessRecordsJSONL(t *testing.T) {
	e := start(t)
	e.AdminJSON(http.MethodGet, "/admin/v1/apps", nil, nil)
	var bad struct{ Details []herald.Detail }
	if code := e.AdminJSON(http.MethodGet, "/admin/v1/access-records?format=jsonl", nil, &bad); code != http.StatusBadRequest ||
		len(bad.Details) != 1 || bad.Details[0].Field != "reason" {
		t.Errorf("jsonl without a reason: %d %+v, want 400 naming reason", code, bad)
	}
	req, _ := http.NewRequest(http.MethodGet, e.Admin.URL+"/admin/v1/access-records?format=jsonl&reason="+url.QueryEscape("audit 2026-Q1"), nil)
	req.Header.Set("Authorization", "Bearer "+e.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/jsonl") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("jsonl: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var lines []access.Record
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var r access.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, r)
	}
	if len(lines) != 3 {
		t.Fatalf("jsonl: %d lines, want 3 (the list, the refused download, this download)", len(lines))
	}
	wantRecord(t, lines[0], "GET /admin/v1/apps", 200, "owner", "")
	wantRecord(t, lines[1], "GET /admin/v1/access-records", 400, "owner", "")
	wantRecord(t, lines[2], "GET /admin/v1/access-records", 200, "owner", "")
	if lines[2].Reason != "audit 2026-Q1" || lines[1].Reason != "" {
		t.Errorf("reasons: %q and %q, want \"\" and the download's", lines[1].Reason, lines[2].Reason)
	}
	for _, r := range lines {
		if !r.Intact() {
			t.Errorf("record %d read from the download does not hold its hash", r.Seq)
		}
	}
}

// TestAccessRecordsTampered edits a record in the database: /verify finds
// it.
func TestAccessRecordsTampered(t *testing.T) {
	e := start(t)
	for range 4 {
		e.AdminJSON(http.MethodGet, "/admin/v1/apps", nil, nil)
	}
	e.exec(`UPDATE access_records SET actor = 'op_someone' WHERE seq = 3`)
	v := e.verdict()
	if v.OK || v.FirstBroken == nil || *v.FirstBroken != 3 || v.Records != 4 {
		t.Errorf("verify after editing record 3: got %+v, want not ok, firstBroken 3 of 4", v)
	}
}

// TestAccessRecordUnwritten holds back an answer whose record cannot be
// written: the API answers 503 ERR-AB-SYS-01, the dashboard its 503 page,
// and once the records can be written again the chain holds.
func TestAccessRecordUnwritten(t *testing.T) {
	e := start(t)
	b := e.adminBrowser()
	b.login()
	e.exec(`ALTER TABLE access_records RENAME TO access_records_away`)
	var body struct{ Code string }
	if code := e.AdminJSON(http.MethodPost, "/admin/v1/apps", map[string]any{"name": "Shop"}, &body); code != http.StatusServiceUnavailable || body.Code != "ERR-AB-SYS-01" {
		t.Errorf("API answer without its record: %d %s, want 503 ERR-AB-SYS-01", code, body.Code)
	}
	resp, page := b.get("/")
	wantStatus(t, resp, page, http.StatusServiceUnavailable)
	if code := e.AdminJSON(http.MethodGet, "/admin/v1/access-records?format=jsonl&reason=audit", nil, &body); code != http.StatusServiceUnavailable || body.Code != "ERR-AB-SYS-01" {
		t.Errorf("a download whose own record cannot be written: %d %s, want 503 ERR-AB-SYS-01 before any line", code, body.Code)
	}
	e.exec(`ALTER TABLE access_records_away RENAME TO access_records`)
	e.AdminJSON(http.MethodGet, "/admin/v1/apps", nil, nil)
	if v := e.verdict(); !v.OK || v.Records != 2 {
		t.Errorf("verify: %+v, want ok over the sign-in and the list", v)
	}
}

// TestDashboardAccessPage reads the records on the dashboard's Access
// page: listed, filtered by user, the chain verified (and found broken
// once a row is edited), and downloaded as JSON lines only with a reason.
func TestDashboardAccessPage(t *testing.T) {
	e := start(t)
	a := e.NewAppWithoutFCM(map[string]any{"name": "Shop", "tier": "business", "appUserEnabled": true})
	e.Register(a, "tok-", "alice")
	e.AdminJSON(http.MethodGet, "/admin/v1/apps/"+a.ID+"/users/alice", nil, nil)
	b := e.adminBrowser()
	b.login()
	resp, page := b.get("/access")
	wantStatus(t, resp, page, http.StatusOK)
	for _, want := range []string{`data-seq="1"`, `data-seq="2"`, `data-seq="3"`, "<code>POST /login</code>", "<code>alice</code>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the Access page lacks %s", want)
		}
	}
	// The apps page, pattern "GET /{$}", reads as a person writes it.
	b.get("/")
	if _, page := b.get("/access"); !strings.Contains(page, "<code>GET /</code>") || strings.Contains(page, "{$}") {
		t.Errorf("the Access page: want the apps page's route as GET /, not Go's GET /{$}")
	}
	resp, page = b.get("/access?userId=alice")
	wantStatus(t, resp, page, http.StatusOK)
	if strings.Count(page, "data-seq=") != 1 || !strings.Contains(page, `data-seq="2"`) {
		t.Errorf("filtered by alice: want record 2 alone:\n%s", page)
	}
	resp, page = b.get("/access?from=yesterday")
	wantStatus(t, resp, page, http.StatusBadRequest)
	resp, page = b.get("/access?verify=1")
	wantStatus(t, resp, page, http.StatusOK)
	if !strings.Contains(page, "The chain holds") {
		t.Errorf("verify: no verdict that the chain holds:\n%s", page)
	}
	e.exec(`UPDATE access_records SET user_ids = '[]' WHERE seq = 2`)
	resp, page = b.get("/access?verify=1")
	if !strings.Contains(page, "The chain is broken at record 2") {
		t.Errorf("verify after editing record 2: no verdict naming it:\n%s", page)
	}
	resp, page = b.get("/access/records.jsonl?userId=alice")
	wantStatus(t, resp, page, http.StatusBadRequest)
	resp, page = b.get("/access/records.jsonl?reason=ticket+42")
	wantStatus(t, resp, page, http.StatusOK)
	lines := strings.Split(strings.TrimSpace(page), "\n")
	var last access.Record
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Reason != "ticket 42" || last.Route != "GET /access/records.jsonl" {
		t.Errorf("the download's last line: %+v, %v; want its own record with the reason", last, err)
	}
}

// TestAccessRecordsNoteUsers: the consent due list (API, page and CSV), a
// consent import and a test push to a user each record the user.
func TestAccessRecordsNoteUsers(t *testing.T) {
	e := start(t)
	a := e.NewApp(nil)
	e.Device(a, "d1", "tok-1", "android", "1.6.0", "u1")
	app := "/admin/v1/apps/" + a.ID
	imported := map[string]any{"users": []map[string]any{{"userId": "u1", "marketing": true, "marketingNight": false, "at": "2024-01-02T09:00:00+09:00"}}}
	if code := e.AdminJSON(http.MethodPost, app+"/consent-import", imported, nil); code != http.StatusOK {
		t.Fatalf("import: %d", code)
	}
	if code := e.AdminJSON(http.MethodGet, app+"/consent-due", nil, nil); code != http.StatusOK {
		t.Fatalf("due list: %d", code)
	}
	var sent struct{ PushID string }
	if code := e.AdminJSON(http.MethodPost, app+"/test-push", map[string]any{"userId": "u1", "title": "t", "content": "c"}, &sent); code != http.StatusOK {
		t.Fatalf("test push: %d", code)
	}
	e.AdminJSON(http.MethodGet, "/admin/v1/pushes/"+sent.PushID, nil, nil)
	b := e.adminBrowser()
	b.login()
	for _, path := range []string{"/apps/" + a.ID + "/consent", "/apps/" + a.ID + "/consent-due.csv?within=0d"} {
		resp, body := b.get(path)
		wantStatus(t, resp, body, http.StatusOK)
	}
	got := map[string][]string{}
	for _, r := range e.records("userId=u1") {
		got[r.Route] = r.UserIDs
	}
	for _, route := range []string{"POST /admin/v1/apps/{appId}/consent-import", "GET /admin/v1/apps/{appId}/consent-due",
		"POST /admin/v1/apps/{appId}/test-push", "GET /apps/{appId}/consent", "GET /apps/{appId}/consent-due.csv"} {
		if !slices.Equal(got[route], []string{"u1"}) {
			t.Errorf("%s: userIds %v, want [u1]", route, got[route])
		}
	}
	reads := 0
	for _, r := range e.records("appId=" + a.ID) {
		if r.Route == "GET /admin/v1/pushes/{pushId}" && r.PushID == sent.PushID {
			reads++
		}
	}
	if reads != 1 {
		t.Errorf("a push read by its ID: %d records of the app name it, want 1", reads)
	}
}
