package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldpush/herald/audience"
)

// TestTagImportCLI: `herald app tag-import` streams a CSV file to the
// admin API: every row's tags are set, each skipped
// row is printed on stdout with its line, the totals on stderr.
func TestTagImportCLI(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true})
	const users = 2500
	e.addUsers(a.ID, users)
	dir := t.TempDir()
	path := filepath.Join(dir, "tags.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "userId,plan,points:number,vip:boolean")
	for i := 1; i <= users; i++ {
		fmt.Fprintf(w, "u%d,gold,%d,%t\n", i, i, i%2 == 0)
	}
	fmt.Fprintln(w, "nobody,gold,,")
	if err := w.Flush(); err != nil || f.Close() != nil {
		t.Fatal(err)
	}
	out, progress, err := heraldCLI(t, nil, "app", "tag-import", a.ID, "--file", path, "--server", e.svc.AdminURL, "--token", e.adminTok)
	if err != nil {
		t.Fatalf("tag-import: %v (%s)", err, progress)
	}
	if out != fmt.Sprintf("skipped line %d (nobody): unknown user\n", users+2) ||
		!strings.HasPrefix(progress, fmt.Sprintf("tag-import: done: %d rows imported, 1 skipped in ", users)) {
		t.Errorf("got stdout %q, stderr %q; want the unknown user's line and the totals", out, progress)
	}
	for _, i := range []int{1, 1001, users} {
		tags, err := e.svc.Store.UserTags(context.Background(), a.ID, fmt.Sprintf("u%d", i))
		if err != nil || !tags["points"].Equal(audience.Number(float64(i))) || !tags["plan"].Equal(audience.String("gold")) {
			t.Errorf("u%d: got %v (%v), want plan gold and points %d", i, tags, err, i)
		}
	}

}

// TestTagImportCLIStdin: with --file -, the file is read from stdin; a
// malformed row stops the import naming its line and column, and nothing
// of its batch is written. Not parallel: it replaces os.Stdin.
func TestTagImportCLIStdin(t *testing.T) {
	e := start(t)
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true})
	e.addUsers(a.ID, 2)
	bad := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(bad, []byte("userId,points:number\nu1,7\nu2,seven\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdin, err := os.Open(bad)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	saved := os.Stdin
	os.Stdin = stdin
	defer func() { os.Stdin = saved }()
	_, _, err = heraldCLI(t, nil, "app", "tag-import", a.ID, "--file", "-", "--server", e.svc.AdminURL, "--token", e.adminTok)
	if err == nil || !strings.Contains(err.Error(), "line 3.points: must be a finite number") ||
		!strings.Contains(err.Error(), "the rows from line 2 on were not written") {
		t.Errorf("malformed line 3 from stdin: got %v, want line 3.points named and nothing of its batch written", err)
	}
	if tags, _ := e.svc.Store.UserTags(context.Background(), a.ID, "u1"); len(tags) != 0 {
		t.Errorf("u1 after the refused file: got %v, want nothing written", tags)
	}
}
