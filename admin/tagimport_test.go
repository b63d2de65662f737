package admin_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/internal/testenv"
)

// tagImportAnswer is the answer of POST …/tag-import.
type tagImportAnswer struct {
	Imported     int
	Skipped      []audience.TagImportSkip
	SkippedCount int
}

// postTags sends body (a string or a reader, streamed) to the app's tag
// import with contentType, as bearer (the owner's token when "").
func (e *env) postTags(a testenv.App, contentType, bearer string, body io.Reader) testenv.Response {
	e.T.Helper()
	req, err := http.NewRequest(http.MethodPost, e.Admin.URL+"/admin/v1/apps/"+a.ID+"/tag-import", body)
	if err != nil {
		e.T.Fatal(err)
	}
	if bearer == "" {
		bearer = e.AdminToken
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.T.Fatalf("tag import: %v", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		e.T.Fatalf("tag import: read answer: %v", err)
	}
	return testenv.Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}

// importTags imports a CSV file and returns its answer, failing the test
// unless it is 200.
func (e *env) importTags(a testenv.App, csv string) tagImportAnswer {
	e.T.Helper()
	res := e.postTags(a, "text/csv", "", strings.NewReader(csv))
	if res.Status != http.StatusOK {
		e.T.Fatalf("tag import: got %d %s, want 200", res.Status, res.Body)
	}
	var out tagImportAnswer
	res.Decode(e.T, &out)
	return out
}

// tagsOf reads a user's tags from the store.
func (e *env) tagsOf(a testenv.App, userID string) audience.Tags {
	e.T.Helper()
	tags, err := e.Store.UserTags(context.Background(), a.ID, userID)
	if err != nil {
		e.T.Fatal(err)
	}
	return tags
}

// addUsers registers users prefix1..prefixN of the app straight in the
// database: the import's subject is tags, not registration.
func (e *env) addUsers(a testenv.App, prefix string, n int) {
	e.T.Helper()
	query := `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO users (app_id, user_id, state, created_at) SELECT ?, ? || CAST(i AS TEXT), 'registered', 0 FROM n`
	if e.Engine == testenv.Postgres {
		query = strings.NewReplacer("i < ?", "i < $1", "SELECT ?, ? ||", "SELECT $2, $3 ||").Replace(query)
		if _, err := e.Node.DB.JobsDB().Exec(query, n, a.ID, prefix); err != nil {
			e.T.Fatalf("add users: %v", err)
		}
		if _, err := e.Node.DB.JobsDB().Exec(`ANALYZE users`); err != nil {
			e.T.Fatalf("analyze: %v", err)
		}
		return
	}
	if _, err := e.SQLiteDB().Writer.Exec(query, n, a.ID, prefix); err != nil {
		e.T.Fatalf("add users: %v", err)
	}
}

// setTags gives a user n tags name0..name(n-1) through the store.
func (e *env) setTags(a testenv.App, userID, name string, n int) {
	e.T.Helper()
	set := map[string]*audience.Value{}
	for i := range n {
		v := audience.Number(float64(i))
		set[fmt.Sprintf("%s%d", name, i)] = &v
	}
	if _, err := e.Store.SetTags(context.Background(), a.ID, userID, set); err != nil {
		e.T.Fatal(err)
	}
}

// TestTagImport: a file of string, number and boolean columns sets each
// row's tags on its user, keeps the tags it does not name and those its
// empty cells leave, and reads quoted cells (commas, quotes) and a
// spreadsheet's byte-order mark and CRLF lines.
func TestTagImport(t *testing.T) {
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1", "u2", "u3")
	plan, keep := audience.String("silver"), audience.String("x")
	if _, err := e.Store.SetTags(context.Background(), a.ID, "u1", map[string]*audience.Value{"plan": &plan, "keep": &keep}); err != nil {
		t.Fatal(err)
	}
	got := e.importTags(a, "\uFEFFuserId,plan,points:number,vip:boolean,city:string\r\n"+
		"u1,gold,120,true,\r\n"+
		"u2,,7.5,false,Busan\r\n"+
		"\r\n"+
		`u3,"a, ""quoted"" plan",,,`+"\r\n")
	if got.Imported != 3 || len(got.Skipped) != 0 || got.SkippedCount != 0 {
		t.Errorf("answer: got %+v, want 3 imported, none skipped", got)
	}
	for user, want := range map[string]audience.Tags{
		"u1": {"plan": audience.String("gold"), "points": audience.Number(120), "vip": audience.Bool(true), "keep": audience.String("x")},
		"u2": {"points": audience.Number(7.5), "vip": audience.Bool(false), "city": audience.String("Busan")},
		"u3": {"plan": audience.String(`a, "quoted" plan`)},
	} {
		if tags := e.tagsOf(a, user); !sameTags(tags, want) {
			t.Errorf("%s: got %v, want %v", user, tags, want)
		}
	}
	// A number column's value is a number, a string column's "120" a
	// string: the column's kind decides, not the text.
	got = e.importTags(a, "userId,code\nu2,120\n")
	if tags := e.tagsOf(a, "u2"); got.Imported != 1 || !tags["code"].Equal(audience.String("120")) {
		t.Errorf("a string column of digits: got %v (%+v), want the string \"120\"", tags["code"], got)
	}
}

// TestTagImportBadHeader: a header that does not start with userId, names
// no tag, names a bad tag or kind, names a tag twice or too many tags is
// refused naming its column, and nothing of the file is written.
func TestTagImportBadHeader(t *testing.T) {
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1")
	many := "userId"
	for i := range audience.MaxTags + 1 {
		many += fmt.Sprintf(",t%d", i)
	}
	for _, tc := range []struct{ name, header, field string }{
		{"NotUserID", "user,plan", "header.column 1"},
		{"NoTag", "userId", "header"},
		{"BadName", "userId,plan,bad name", "header.column 3"},
		{"EmptyName", "userId,plan,", "header.column 3"},
		{"BadKind", "userId,plan,points:int", "header.column 3"},
		{"Duplicate", "userId,plan,points:number,plan:number", "header.column 4"},
		{"TooMany", many, "header"},
		{"BareQuote", `userId,pl"an`, "header"},
		{"Empty", "", "body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.header + "\n"
			if tc.header != "" {
				body += "u1" + strings.Repeat(",x", strings.Count(tc.header, ",")) + "\n"
			}
			res := e.postTags(a, "text/csv", "", strings.NewReader(body))
			got := testenv.WantError(t, res, "/admin/v1/apps/"+a.ID+"/tag-import", herald.ErrInvalidRequest)
			if len(got.Details) == 0 || got.Details[0].Field != tc.field {
				t.Errorf("details: got %+v, want %s named first", got.Details, tc.field)
			}
		})
	}
	if tags := e.tagsOf(a, "u1"); len(tags) != 0 {
		t.Errorf("after refused headers: got %v, want nothing written", tags)
	}
}

// TestTagImportMalformedLine: a malformed row stops the import naming its
// line and column; the batches of 1,000 rows before it stay imported, the
// rows of its own batch are not written. Each kind of malformed row is
// named so.
func TestTagImportMalformedLine(t *testing.T) {
	e := start(t)
	a := e.NewApp(nil)
	e.addUsers(a, "u", 3000)
	var body strings.Builder
	body.WriteString("userId,plan,points:number\n")
	for line := 2; line <= 3001; line++ {
		points := fmt.Sprint(line)
		if line == 2500 {
			points = "many"
		}
		fmt.Fprintf(&body, "u%d,p%d,%s\n", line-1, line, points)
	}
	res := e.postTags(a, "text/csv", "", strings.NewReader(body.String()))
	got := testenv.WantError(t, res, "/admin/v1/apps/"+a.ID+"/tag-import", herald.ErrInvalidRequest)
	if len(got.Details) != 2 || got.Details[0] != (herald.Detail{Field: "line 2500.points", Reason: "must be a finite number"}) ||
		!strings.Contains(got.Details[1].Reason, "the rows from line 2002 on were not written; the 2000 rows before line 2002 were imported") {
		t.Errorf("details: got %+v, want line 2500.points named and the batches before line 2002 kept", got.Details)
	}
	for _, tc := range []struct {
		line int
		want bool
	}{{2, true}, {1001, true}, {1002, true}, {2001, true}, {2002, false}, {2499, false}, {2501, false}, {3001, false}} {
		tags := e.tagsOf(a, fmt.Sprintf("u%d", tc.line-1))
		if imported := tags["points"].Equal(audience.Number(float64(tc.line))); imported != tc.want {
			t.Errorf("line %d: got tags %v, want imported %v", tc.line, tags, tc.want)
		}
	}
	var n int
	if err := e.QueryRow(`SELECT count(*) FROM user_tags WHERE app_id = ?`, a.ID).Scan(&n); err != nil || n != 4000 {
		t.Errorf("tags written: got %d (%v), want 4000 (two batches of 1,000 rows, two tags each)", n, err)
	}

	for _, tc := range []struct{ name, row, field string }{
		{"TooFewFields", "u1,gold", "line 3"},
		{"TooManyFields", "u1,gold,1,2", "line 3"},
		{"BareQuote", `u1,go"ld,1`, "line 3"},
		{"BadNumber", "u1,gold,1e999", "line 3.points"},
		{"BadBoolean", "u1,gold,1,yes", "line 3.vip"},
		{"NoUser", ",gold,1", "line 3.userId"},
		{"LongString", "u1," + strings.Repeat("x", audience.MaxTagValue+1) + ",1", "line 3.plan"},
		{"BadUTF8", "u1,\xff,1", "line 3.plan"},
		{"LongRecord", "u1," + strings.Repeat("x", audience.MaxTagRecord+1) + ",1", "line 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			header := "userId,plan,points:number"
			if tc.name == "BadBoolean" {
				header += ",vip:boolean"
			}
			res := e.postTags(a, "text/csv", "", strings.NewReader(header+"\nu2999,"+strings.Repeat(",", strings.Count(header, ",")-1)+"\n"+tc.row+"\n"))
			got := testenv.WantError(t, res, "/admin/v1/apps/"+a.ID+"/tag-import", herald.ErrInvalidRequest)
			if len(got.Details) == 0 || got.Details[0].Field != tc.field {
				t.Errorf("details: got %+v, want %s named first", got.Details, tc.field)
			}
		})
	}
}

// TestTagImportSkips: rows of users unknown, withdrawn, or whose tags
// would pass the limit are skipped with their line and the reason, the
// others imported; a later row of the same user is judged on what the
// earlier rows left. The answer lists at most 1,000 skipped rows and
// counts them all.
func TestTagImportSkips(t *testing.T) {
	e := start(t)
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true})
	e.Register(a, "tok-", "u1", "gone", "full")
	if res := e.Withdraw(t, a, "gone"); res.Status != http.StatusOK {
		t.Fatalf("withdraw: %d %s", res.Status, res.Body)
	}
	e.setTags(a, "full", "t", audience.MaxTags-2)
	got := e.importTags(a, "userId,new1,new2,new3,t0\n"+
		"u1,a,b,c,d\n"+ // line 2
		"nobody,a,,,\n"+ // 3
		"gone,a,,,\n"+ // 4
		"full,a,b,c,\n"+ // 5: 3 new tags, one too many
		"full,a,,,zero\n"+ // 6: one new, one changed: 99
		"full,,b,,\n"+ // 7: 100
		"full,,,c,\n") // 8: 101
	want := []audience.TagImportSkip{
		{UserID: "nobody", Line: 3, Reason: herald.SkipUnknownUser},
		{UserID: "gone", Line: 4, Reason: herald.SkipWithdrawnUser},
		{UserID: "full", Line: 5, Reason: audience.SkipTooManyTags},
		{UserID: "full", Line: 8, Reason: audience.SkipTooManyTags},
	}
	if got.Imported != 3 || got.SkippedCount != 4 || fmt.Sprint(got.Skipped) != fmt.Sprint(want) {
		t.Errorf("answer: got %+v, want 3 imported and skipped %+v", got, want)
	}
	full := e.tagsOf(a, "full")
	if len(full) != audience.MaxTags || !full["t0"].Equal(audience.String("zero")) || full["new3"] != (audience.Value{}) {
		t.Errorf("full: got %d tags (t0 %v, new3 %v), want %d with t0 zero and no new3", len(full), full["t0"], full["new3"], audience.MaxTags)
	}
	if tags := e.tagsOf(a, "u1"); len(tags) != 4 {
		t.Errorf("u1: got %v, want its 4 tags", tags)
	}

	var many strings.Builder
	many.WriteString("userId,plan\n")
	for i := range 1200 {
		fmt.Fprintf(&many, "ghost%d,gold\n", i)
	}
	got = e.importTags(a, many.String())
	if got.Imported != 0 || got.SkippedCount != 1200 || len(got.Skipped) != 1000 || got.Skipped[999].Line != 1001 {
		t.Errorf("1,200 unknown users: got %d imported, %d counted, %d listed, want 0, 1200 and the first 1000", got.Imported, got.SkippedCount, len(got.Skipped))
	}
}

// TestTagImportContentType: a body not declared text/csv (UTF-8) is
// refused naming Content-Type, before anything is read.
func TestTagImportContentType(t *testing.T) {
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1")
	const body = "userId,plan\nu1,gold\n"
	for _, ct := range []string{"", "application/json", "text/plain", "text/csv; charset=iso-8859-1", "text/csv; charset"} {
		res := e.postTags(a, ct, "", strings.NewReader(body))
		got := testenv.WantError(t, res, "/admin/v1/apps/"+a.ID+"/tag-import", herald.ErrInvalidRequest)
		if len(got.Details) != 1 || got.Details[0].Field != "Content-Type" {
			t.Errorf("%q: details %+v, want Content-Type named", ct, got.Details)
		}
	}
	if tags := e.tagsOf(a, "u1"); len(tags) != 0 {
		t.Errorf("after refusals: got %v, want nothing written", tags)
	}
	if res := e.postTags(a, "text/csv; charset=UTF-8", "", strings.NewReader(body)); res.Status != http.StatusOK {
		t.Errorf("text/csv; charset=UTF-8: got %d %s, want 200", res.Status, res.Body)
	}
}

// TestTagImportNeedsOperator: a viewer of the app is refused 403, and
// nothing is written; an operator imports.
func TestTagImportNeedsOperator(t *testing.T) {
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1")
	token := func(role string) string {
		var op struct{ OperatorID string }
		if code := e.AdminJSON("POST", "/admin/v1/operators", map[string]any{"email": role + "@example.com", "name": role, "role": role, "apps": []string{a.ID}}, &op); code != http.StatusCreated {
			t.Fatalf("add %s: got %d", role, code)
		}
		var tok struct{ Token string }
		if code := e.AdminJSON("POST", "/admin/v1/operators/"+op.OperatorID+"/tokens", map[string]any{"name": "t", "expiresInDays": 7}, &tok); code != http.StatusCreated {
			t.Fatalf("token of %s: got %d", role, code)
		}
		return tok.Token
	}
	const body = "userId,plan\nu1,gold\n"
	res := e.postTags(a, "text/csv", token("viewer"), strings.NewReader(body))
	if res.Status != http.StatusForbidden || !strings.Contains(string(res.Body), herald.ErrForbidden.Code) {
		t.Errorf("viewer: got %d %s, want 403 %s", res.Status, res.Body, herald.ErrForbidden.Code)
	}
	if tags := e.tagsOf(a, "u1"); len(tags) != 0 {
		t.Errorf("after the viewer: got %v, want nothing written", tags)
	}
	if res := e.postTags(a, "text/csv", token("operator"), strings.NewReader(body)); res.Status != http.StatusOK {
		t.Errorf("operator: got %d %s, want 200", res.Status, res.Body)
	}
}

// TestTagImportLimitBurst: imports and tag updates of one user near the
// limit, made at once, each adding 5 tags of its own, are judged one
// after the other in the transactions that write them: exactly as many
// as fit are applied, whole, and every other one is refused (an update)
// or reports the user skipped (an import); the user never passes 100.
func TestTagImportLimitBurst(t *testing.T) {
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1", "u2")
	e.setTags(a, "u1", "base", audience.MaxTags-10)
	const each, imports, updates = 5, 4, 4
	applied := make([]bool, imports+updates)
	var wg sync.WaitGroup
	for i := range imports + updates {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var names []string
			for j := range each {
				names = append(names, fmt.Sprintf("w%d_%d", i, j))
			}
			if i < imports {
				// u2 rides along, so that the batch locks two users.
				csv := "userId," + strings.Join(names, ",") + "\nu2" + strings.Repeat(",x", each) + "\nu1" + strings.Repeat(",x", each) + "\n"
				res := e.postTags(a, "text/csv", "", strings.NewReader(csv))
				var got tagImportAnswer
				if res.Status != http.StatusOK {
					t.Errorf("import %d: got %d %s", i, res.Status, res.Body)
					return
				}
				res.Decode(t, &got)
				skip := audience.TagImportSkip{UserID: "u1", Line: 3, Reason: audience.SkipTooManyTags}
				switch {
				case got.Imported == 2 && got.SkippedCount == 0:
					applied[i] = true
				case got.Imported == 1 && got.SkippedCount == 1 && got.Skipped[0] == skip:
				default:
					t.Errorf("import %d: got %+v, want u1 imported or skipped at line 3", i, got)
				}
				return
			}
			tags := map[string]any{}
			for _, n := range names {
				tags[n] = "x"
			}
			var code int
			switch code = e.AdminJSON(http.MethodPut, "/admin/v1/apps/"+a.ID+"/users/u1/tags", map[string]any{"tags": tags}, nil); code {
			case http.StatusOK:
				applied[i] = true
			case http.StatusBadRequest:
			default:
				t.Errorf("update %d: got %d, want 200 or 400", i, code)
			}
		}()
	}
	wg.Wait()
	tags := e.tagsOf(a, "u1")
	ok := 0
	for i, done := range applied {
		for j := range each {
			if _, has := tags[fmt.Sprintf("w%d_%d", i, j)]; has != done {
				t.Errorf("writer %d (applied %v): tag w%d_%d present %v", i, done, i, j, has)
			}
		}
		if done {
			ok++
		}
	}
	if ok != 10/each || len(tags) != audience.MaxTags {
		t.Errorf("got %d applied, %d tags; want %d applied and %d tags", ok, len(tags), 10/each, audience.MaxTags)
	}
}

// TestTagImportStreams: a file of 50,000 rows, written as it is sent, is
// imported whole in batches (the server holds one batch at a time).
func TestTagImportStreams(t *testing.T) {
	const rows = 50_000
	e := start(t)
	a := e.NewApp(nil)
	e.addUsers(a, "u", rows)
	pr, pw := io.Pipe()
	go func() {
		w := io.Writer(pw)
		fmt.Fprintln(w, "userId,plan,points:number,vip:boolean")
		for i := 1; i <= rows; i++ {
			fmt.Fprintf(w, "u%d,plan-%d,%d,%t\n", i, i%7, i, i%2 == 0)
		}
		pw.Close()
	}()
	res := e.postTags(a, "text/csv", "", pr)
	if res.Status != http.StatusOK {
		t.Fatalf("import: got %d %s", res.Status, res.Body)
	}
	var got tagImportAnswer
	res.Decode(t, &got)
	if got.Imported != rows || got.SkippedCount != 0 {
		t.Errorf("answer: got %+v, want %d imported", got, rows)
	}
	for _, i := range []int{1, 1000, 1001, rows/2 + 17, rows} {
		want := audience.Tags{"plan": audience.String(fmt.Sprintf("plan-%d", i%7)), "points": audience.Number(float64(i)), "vip": audience.Bool(i%2 == 0)}
		if tags := e.tagsOf(a, fmt.Sprintf("u%d", i)); !sameTags(tags, want) {
			t.Errorf("u%d: got %v, want %v", i, tags, want)
		}
	}
}
