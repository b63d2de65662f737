package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"
)

// importUsers is how many lines TestConsentImportCLI imports: 100,000
// in the long run (testenv.EnvLong), 5,000 otherwise.
func importUsers() int {
	if os.Getenv(testenv.EnvLong) != "" {
		return 100_000
	}
	return 5_000
}

// addUsers registers users u1..un of the app straight in the database:
// the import's subject is consent, not registration, which the SDK tests
// cover.
func (e *env) addUsers(appID string, n int) {
	e.t.Helper()
	db, query := e.svc.DB.JobsDB(), `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO users (app_id, user_id, state, created_at) SELECT ?, 'u' || CAST(i AS TEXT), 'registered', 0 FROM n`
	if e.dbURL != "" {
		query = strings.Replace(strings.Replace(query, "?", "$1", 1), "?", "$2", 1)
	} else {
		db = e.SQLiteDB().Writer
	}
	if _, err := db.Exec(query, n, appID); err != nil {
		e.t.Fatalf("add users: %v", err)
	}
	if e.dbURL != "" {
		// Users registered one by one over months have their statistics;
		// a table filled in one statement has none until autovacuum
		// comes, and meanwhile the planner scans it whole.
		if _, err := db.Exec(`ANALYZE users`); err != nil {
			e.t.Fatalf("analyze: %v", err)
		}
	}
}

// TestConsentImportCLI: `herald app consent-import` streams a file of
// 100,000 lines in batches of 1,000 with progress; every user is imported
// with its original date; a file imported again skips every user as
// already imported; a malformed line stops the import naming the line,
// with the batches before it imported.
func TestConsentImportCLI(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true})
	importUsers := importUsers()
	e.addUsers(a.ID, importUsers)
	dir := t.TempDir()
	path := filepath.Join(dir, "users.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	base := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= importUsers; i++ {
		fmt.Fprintf(w, `{"userId":"u%d","marketing":true,"marketingNight":%t,"at":"%s"}`+"\n", i, i%2 == 0,
			base.Add(time.Duration(i)*time.Minute).Format(time.RFC3339))
	}
	if err := w.Flush(); err != nil || f.Close() != nil {
		t.Fatal(err)
	}
	cli := func(file string) (string, string, error) {
		var out, errOut bytes.Buffer
		err := run(context.Background(), []string{"app", "consent-import", a.ID, "--file", file, "--server", e.svc.AdminURL,
			"--token", e.adminTok}, func(string) string { return "" }, &out, &errOut)
		return out.String(), errOut.String(), err
	}
	began := time.Now()
	out, progress, err := cli(path)
	took := time.Since(began)
	if err != nil {
		t.Fatalf("consent-import: %v (%s)", err, progress)
	}
	t.Logf("imported %d lines in %s on %s", importUsers, took.Round(time.Millisecond), testEngine())
	lines := strings.Split(strings.TrimSpace(progress), "\n")
	if len(lines) != importUsers/1000+1 || lines[0] != "consent-import: 1000 users, 1000 imported, 0 skipped" ||
		!strings.HasPrefix(lines[len(lines)-1], fmt.Sprintf("consent-import: done: %d users, %d imported, 0 skipped in ", importUsers, importUsers)) || out != "" {
		t.Errorf("progress: got %d lines, first %q, last %q, stdout %q", len(lines), lines[0], lines[len(lines)-1], out)
	}
	for _, i := range []int{1, importUsers/2 + 321, importUsers} {
		h := e.consentHistory(a, fmt.Sprintf("u%d", i))
		if len(h) != 1 || h[0].Source != "import" || !h[0].At.Equal(base.Add(time.Duration(i)*time.Minute)) ||
			h[0].MarketingNight.To != (i%2 == 0) {
			t.Errorf("u%d's history: got %v, want one import at its date", i, h)
		}
	}

	small := filepath.Join(dir, "again.jsonl")
	var again strings.Builder
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&again, `{"userId":"u%d","marketing":true,"marketingNight":%t,"at":"%s"}`+"\n\n", i, i%2 == 0,
			base.Add(time.Duration(i)*time.Minute).Format(time.RFC3339))
	}
	if err := os.WriteFile(small, []byte(again.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err = cli(small)
	if err != nil || out != "skipped u1: already imported\nskipped u2: already imported\nskipped u3: already imported\n" {
		t.Errorf("imported again: got %q, %v, want every user skipped as already imported", out, err)
	}

	bad := filepath.Join(dir, "bad.jsonl")
	body := `{"userId":"u1","marketing":false,"at":"2025-01-01T00:00:00Z"}` + "\n" + `{"userId":"u2","marketing":true,"at":"yesterday"}` + "\n"
	if err := os.WriteFile(bad, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	// Line 1 lacks marketingNight: malformed too (all four members are
	// required), not "keep the current value".
	if _, _, err := cli(bad); err == nil || !strings.Contains(err.Error(), "line 2 at: must be an RFC 3339") ||
		!strings.Contains(err.Error(), "line 1 marketingNight: is required") {
		t.Errorf("malformed lines: got %v, want an error naming line 1's marketingNight and line 2's at", err)
	}
	if h := e.consentHistory(a, "u1"); len(h) != 1 {
		t.Errorf("u1 after the refused batch: got %v, want nothing imported from it", h)
	}
}

// TestConsentImportCLINamesBadLine: a line that is not JSON is named by
// its own number (not the first line of its batch) in words, without Go's
// internals, and nothing of its batch is imported.
func TestConsentImportCLINamesBadLine(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true})
	e.addUsers(a.ID, 6)
	var body strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&body, `{"userId":"u%d","marketing":true,"marketingNight":false,"at":"2024-05-01T09:00:00+09:00"}`+"\n", i)
	}
	body.WriteString(`{"userId":"u6","marketing":true,"marketingNight":false,"at":2024-05-01}` + "\n")
	path := filepath.Join(t.TempDir(), "users.jsonl")
	if err := os.WriteFile(path, []byte(body.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := heraldCLI(t, nil, "app", "consent-import", a.ID, "--file", path, "--server", e.svc.AdminURL, "--token", e.adminTok)
	if err == nil || !strings.Contains(err.Error(), "line 6 is not JSON") {
		t.Fatalf("bad line 6: got %v, want an error naming line 6", err)
	}
	for _, internal := range []string{"line 1:", "MarshalJSON", "json.RawMessage", "json:"} {
		if strings.Contains(err.Error(), internal) {
			t.Errorf("bad line 6: got %q, want no %q", err, internal)
		}
	}
	if h := e.consentHistory(a, "u1"); len(h) != 0 {
		t.Errorf("u1 after the bad line: got %v, want nothing of the batch imported", h)
	}
}

// consentHistory reads a user's consent history through the admin API.
func (e *env) consentHistory(a testApp, userID string) []consentChange {
	e.t.Helper()
	var out struct {
		UserID  string
		Changes []consentChange
	}
	if code := e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/users/"+url.PathEscape(userID)+"/consent-history", nil, &out); code != http.StatusOK {
		e.t.Fatalf("consent history of %s: got %d, want 200", userID, code)
	}
	if out.UserID != userID {
		e.t.Errorf("consent history: got userId %q, want %q", out.UserID, userID)
	}
	return out.Changes
}

// consentChange is one entry of GET …/consent-history.
type consentChange struct {
	At                        time.Time
	Source                    string
	DeviceID                  *string
	Marketing, MarketingNight struct{ From, To bool }
}
