package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/postgres/pgtest"
	"github.com/heraldpush/herald/server"
)

// TestDemoRestart: `serve --demo` prints where its service-account file is;
// an app the newcomer creates and sets up with that file still delivers
// after the demo is restarted, since the emulator keeps its address.
func TestDemoRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the demo twice")
	}
	t.Parallel()
	dataDir := t.TempDir()
	args := []string{"serve", "--demo", "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0",
		"--demo-fcm-addr", freeAddr(t), "--data-dir", dataDir, "--log-level", "warn"}
	getenv := func(string) string { return "" }
	fileLine := regexp.MustCompile(`service-account file for the emulator: (\S+)\n`)

	demo := runInBackground(t, getenv, args...)
	urls := demo.waitOutput(listening)
	credsPath := demo.waitOutput(fileLine)[1]
	creds, err := os.ReadFile(credsPath)
	if err != nil {
		t.Fatalf("demo service-account file: %v", err)
	}
	e := &env{t: t, svc: &service{Server: &server.Server{PublicURL: urls[1], AdminURL: urls[2]}}, adminTok: readAdminToken(t, dataDir)}
	e.bind()
	var app struct{ AppID, APIKey, SecretKey string }
	if code := e.AdminJSON("POST", "/admin/v1/apps", map[string]any{"name": "Mine"}, &app); code != http.StatusCreated {
		t.Fatalf("create app: got %d", code)
	}
	if code := e.AdminJSON("PUT", "/admin/v1/apps/"+app.AppID+"/fcm-credentials", creds, nil); code != http.StatusOK {
		t.Fatalf("upload the demo's service-account file: got %d, want 200", code)
	}
	a := testApp{ID: app.AppID, Client: client.New(urls[1], app.APIKey, app.SecretKey, nil)}
	e.Device(a, "d1", "mine-token-1", "android", "1.6.0", "me")
	if err := demo.stop(); err != nil {
		t.Fatalf("stop the demo: %v", err)
	}

	again := runInBackground(t, getenv, args...)
	urls = again.waitOutput(listening)
	if again.waitOutput(fileLine)[1] != credsPath {
		t.Errorf("restart: service-account file moved, want %s kept", credsPath)
	}
	e.svc = &service{Server: &server.Server{PublicURL: urls[1], AdminURL: urls[2]}}
	e.bind()
	a.Client = client.New(urls[1], app.APIKey, app.SecretKey, nil)
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"me"}, Title: "After a restart", Content: "Still here"})
	if err != nil {
		t.Fatalf("push after the restart: %v", err)
	}
	if p := e.WaitFinal(res.PushID, 20*time.Second); p.Status != "done" || p.Counts.Sent != 1 {
		b, _ := json.Marshal(p)
		t.Fatalf("push after the restart: got %s, want done with 1 sent", b)
	}
}

// TestDemoOnPostgres: `serve --demo` with a database URL and a data dir that
// does not exist yet starts, says it runs on PostgreSQL (it said embedded
// SQLite) and keeps the demo's service-account file in the dir (it stopped
// at writing that file: with a database URL nothing else creates the dir).
func TestDemoOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the demo")
	}
	dbURL := pgtest.NewSchema(t, pgtest.BaseURL(t), nil)
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "herald-data")
	env := map[string]string{"HERALD_MASTER_KEY": testMasterKey, "HERALD_ADMIN_TOKEN": "demo-admin-token-0123456789abcdef"}
	demo := runInBackground(t, func(k string) string { return env[k] },
		"serve", "--demo", "--database-url", dbURL, "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0",
		"--demo-fcm-addr", freeAddr(t), "--data-dir", dataDir, "--log-level", "warn")
	demo.waitOutput(listening)
	demo.waitOutput(regexp.MustCompile(`Herald demo is running \(PostgreSQL, `))
	path := demo.waitOutput(regexp.MustCompile(`service-account file for the emulator: (\S+)\n`))[1]
	if filepath.Dir(path) != dataDir {
		t.Errorf("service-account file %s, want it in %s", path, dataDir)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("demo service-account file: %v", err)
	}
}
