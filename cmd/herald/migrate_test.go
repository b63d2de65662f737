package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// TestMigrateNewerSchema: on a database a newer herald migrated, migrate
// says it applied nothing and names both versions, and serve starts with
// a warning saying the same (a rolling upgrade's old node).
//
// Not parallel: it locks one data dir twice in turn in this process, and a
// test starting a process meanwhile holds the first lock's descriptor from
// fork to exec (flock is released when every copy is closed), which the
// second would find taken.
func TestMigrateNewerSchema(t *testing.T) {
	dir := t.TempDir()
	getenv := func(string) string { return "" }
	migrate := func() string {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := run(context.Background(), []string{"migrate", "--data-dir", dir, "--log-level", "warn"}, getenv, &out, &errOut); err != nil {
			t.Fatalf("migrate: %v (%s)", err, errOut.String())
		}
		return out.String()
	}
	if out := migrate(); !strings.Contains(out, "migrations applied") {
		t.Fatalf("first migrate: got %q, want migrations applied", out)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	var binary int64
	if err := db.QueryRow(`SELECT MAX(version_id) FROM goose_db_version`).Scan(&binary); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (?, 1)`, binary+5); err != nil {
		t.Fatal(err)
	}
	db.Close()

	out := migrate()
	for _, want := range []string{"nothing applied", fmt.Sprintf("version %d, newer than this binary's %d", binary+5, binary)} {
		if !strings.Contains(out, want) {
			t.Errorf("migrate of a newer schema: got %q, want %q", out, want)
		}
	}
	logs := newSyncBuffer()
	cfg := config{Addr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", DataDir: dir, AdminToken: "test-admin-token-0123", LogLevel: "info", LogFormat: "text"}
	svc, err := startService(context.Background(), cfg, &bytes.Buffer{}, logs)
	if err != nil {
		t.Fatalf("serve on a newer schema: %v", err)
	}
	defer svc.shutdown()
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "newer than this binary") {
		t.Errorf("serve's log: got %q, want a WARN naming the newer schema", l)
	}
}
