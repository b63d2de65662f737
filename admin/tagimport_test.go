package admin_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/heraldpush/herald/internal/testenv"
)

// importCSV posts a tag import as bearer.
func (e *env) importCSV(bearer string, a testenv.App, csv, contentType string) testenv.Response {
	e.T.Helper()
	return testenv.Send(e.T, http.DefaultClient, e.Admin.URL, testenv.Request{Method: "POST", URL: "/admin/v1/apps/" + a.ID + "/tag-import",
		Body: csv, Header: map[string]string{"Authorization": "Bearer " + bearer, "Content-Type": contentType}})
}

// tagsOf reads a user's tags through the admin API.
func (e *env) tagsOf(a testenv.App, user string) map[string]any {
	e.T.Helper()
	var u struct{ Tags map[string]any }
	if code := e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/users/"+user, nil, &u); code != http.StatusOK {
		e.T.Fatalf("user %s: got %d", user, code)
	}
	return u.Tags
}

type importAnswer struct {
	Imported     int
	SkippedCount int
	Skipped      []struct {
		UserID string
		Line   int
		Reason string
	}
}

type importRefusal struct {
	Code    string
	Details []struct{ Field, Reason string }
}

// TestTagImport: a CSV file sets the tags of each row's user, a column a
// tag of its kind, an empty cell leaving the tag as it was; unknown and
// withdrawn users are skipped with their line; a bad header or content
// type changes nothing; a malformed line stops the import there, the
// batches before it kept and the rest not.
func TestTagImport(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true})
	e.Register(a, "tok-", "u1", "u2", "u3", "gone")
	if res := e.Withdraw(t, a, "gone"); res.Status != http.StatusOK {
		t.Fatalf("withdraw: %d %s", res.Status, res.Body)
	}
	e.Server(t, a, http.MethodPut, "/api/app-user/v2/tags", map[string]any{"userId": "u2", "tags": map[string]any{"plan": "silver", "keep": "me"}})

	file := "\ufeffuserId,plan,points:number,vip:boolean,city:string\n" +
		"u1,gold,1200,true,서울\n" +
		"u2,,7.5,false,\n" + // plan left as it was
		"ghost,gold,1,true,x\n" +
		"gone,gold,1,true,x\n" +
		"\"u3\",\"a, quoted\"\"value\"\"\",0,false,\n"
	res := e.importCSV(e.AdminToken, a, file, "text/csv; charset=utf-8")
	var got importAnswer
	if res.Status != http.StatusOK {
		t.Fatalf("import: got %d %s", res.Status, res.Body)
	}
	res.Decode(t, &got)
	if got.Imported != 3 || got.SkippedCount != 2 || len(got.Skipped) != 2 || got.Skipped[0].UserID != "ghost" || got.Skipped[0].Line != 4 ||
		got.Skipped[1].UserID != "gone" || got.Skipped[1].Line != 5 || !strings.Contains(got.Skipped[1].Reason, "withdrawn") {
		t.Fatalf("import: got %+v, want 3 imported, ghost (line 4) and gone (line 5) skipped", got)
	}
	for user, want := range map[string]map[string]any{
		"u1": {"plan": "gold", "points": 1200.0, "vip": true, "city": "서울"},
		"u2": {"plan": "silver", "keep": "me", "points": 7.5, "vip": false},
		"u3": {"plan": `a, quoted"value"`, "points": 0.0, "vip": false},
	} {
		if tags := e.tagsOf(a, user); fmt.Sprint(tags) != fmt.Sprint(want) {
			t.Errorf("%s: got tags %v, want %v", user, tags, want)
		}
	}

	refused := func(name, csv, contentType, field string) {
		t.Helper()
		res := e.importCSV(e.AdminToken, a, csv, contentType)
		var r importRefusal
		json.Unmarshal(res.Body, &r)
		if res.Status != http.StatusBadRequest || r.Code != "ERR-AB-VAL-00" || len(r.Details) == 0 || r.Details[0].Field != field {
			t.Errorf("%s: got %d %s, want 400 naming %s", name, res.Status, res.Body, field)
		}
	}
	before := e.tagsOf(a, "u1")
	refused("JSON", `{"userId":"u1"}`, "application/json", "Content-Type")
	refused("no header", "u1,gold\n", "text/csv", "header")
	refused("empty", "", "text/csv", "header")
	refused("a bad tag name", "userId,two words\nu1,x\n", "text/csv", "header.column 2")
	refused("a bad kind", "userId,plan:date\nu1,x\n", "text/csv", "header.column 2")
	refused("a tag twice", "userId,plan,plan:number\nu1,x,1\n", "text/csv", "header.column 3")
	refused("a short row", "userId,plan,points:number\nu1,x\n", "text/csv", "line 2")
	refused("a stray quote", "userId,plan\nu1,\"x\n", "text/csv", "line 2")
	refused("not a number", "userId,plan,points:number\nu1,platinum,lots\n", "text/csv", "line 2.points")
	refused("a row too long", "userId,plan\nu1,"+strings.Repeat("x", 70<<10)+"\n", "text/csv", "line 2")
	if after := e.tagsOf(a, "u1"); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("refused imports changed u1's tags: %v, was %v", after, before)
	}

	t.Run("StopsAtAMalformedLine", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("userId,batch:number\n")
		for i := range 2500 {
			u := "u1"
			if i%2 == 1 {
				u = "u3"
			}
			fmt.Fprintf(&b, "%s,%d\n", u, i)
		}
		b.WriteString("u2,not a number\n") // line 2502, in the third batch
		res := e.importCSV(e.AdminToken, a, b.String(), "text/csv")
		var r importRefusal
		json.Unmarshal(res.Body, &r)
		if res.Status != http.StatusBadRequest || len(r.Details) != 2 || r.Details[0].Field != "line 2502.batch" || r.Details[1].Field != "imported" ||
			!strings.Contains(r.Details[1].Reason, "2000 rows before it were imported") {
			t.Fatalf("got %d %s, want 400 naming line 2502 and the 2000 rows imported", res.Status, res.Body)
		}
		// The first two batches were written (their last rows: 1998 for
		// u1, 1999 for u3); the third, from line 2002, was not.
		if u1, u3 := e.tagsOf(a, "u1")["batch"], e.tagsOf(a, "u3")["batch"]; u1 != 1998.0 || u3 != 1999.0 {
			t.Errorf("after the stop: u1 batch %v, u3 batch %v; want 1998 and 1999", u1, u3)
		}
	})
	t.Run("ErrViewer", func(t *testing.T) {
		_, viewer := e.newOperator("viewer-import@example.com", "viewer", []string{a.ID})
		if res := e.importCSV(viewer, a, "userId,plan\nu1,x\n", "text/csv"); res.Status != http.StatusForbidden {
			t.Errorf("a viewer's import: got %d, want 403", res.Status)
		}
		if res := e.importCSV(e.AdminToken, testenv.App{ID: "app_nope"}, "userId,plan\nu1,x\n", "text/csv"); res.Status != http.StatusNotFound {
			t.Errorf("an unknown app: got %d, want 404", res.Status)
		}
	})
}

// TestTagImportLimitBurst: imports and tag updates racing to fill one
// user's last tags never leave it more than 100; every row and update
// left out is reported as such.
func TestTagImportLimitBurst(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true})
	e.Register(a, "tok-", "full")
	base := map[string]any{}
	for i := range 95 {
		base[fmt.Sprintf("t%d", i)] = i
	}
	if res := e.Server(t, a, http.MethodPut, "/api/app-user/v2/tags", map[string]any{"userId": "full", "tags": base}); res.Status != http.StatusOK {
		t.Fatalf("95 tags: %d %s", res.Status, res.Body)
	}
	const writers = 12 // each adds 2 new tags: at most 2 of them fit
	var wg sync.WaitGroup
	applied := make([]bool, writers)
	for w := range writers {
		wg.Go(func() {
			a1, a2 := fmt.Sprintf("w%da", w), fmt.Sprintf("w%db", w)
			if w%2 == 0 {
				res := e.importCSV(e.AdminToken, a, "userId,"+a1+","+a2+"\nfull,x,y\n", "text/csv")
				var got importAnswer
				json.Unmarshal(res.Body, &got)
				if res.Status != http.StatusOK || got.Imported+got.SkippedCount != 1 {
					t.Errorf("import %d: got %d %s", w, res.Status, res.Body)
				}
				applied[w] = got.Imported == 1
				return
			}
			res := e.Server(t, a, http.MethodPut, "/api/app-user/v2/tags", map[string]any{"userId": "full", "tags": map[string]any{a1: "x", a2: "y"}})
			if res.Status != http.StatusOK && res.Status != http.StatusBadRequest {
				t.Errorf("update %d: got %d %s", w, res.Status, res.Body)
			}
			applied[w] = res.Status == http.StatusOK
		})
	}
	wg.Wait()
	n := 0
	for _, ok := range applied {
		if ok {
			n++
		}
	}
	if tags := e.tagsOf(a, "full"); len(tags) > 100 || len(tags) != 95+2*n || n != 2 {
		t.Errorf("after the burst: %d tags with %d writers applied; want at most 100, 95 + 2 per writer applied, and 2 applied", len(tags), n)
	}
}
