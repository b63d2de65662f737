package main

import (
	"context"
	"database/sql"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm"
	"github.com/heraldpush/herald/server"
	"github.com/heraldpush/herald/webhook"
)

// TestOnlineBackup follows docs/operations.md: a backup taken with SQLite's
// online backup (sqlite3 .backup) or VACUUM INTO while Herald serves and
// sends, restored with the master key into a new data directory, starts
// and has the app, its history, and FCM credentials that still open.
func TestOnlineBackup(t *testing.T) {
	if os.Getenv("HERALD_TEST_DATABASE_URL") != "" {
		t.Skip("the embedded store's backup")
	}
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "backup-tok-", "u1", "u2")
	before, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1", "u2"}, Title: "Before the backup", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	e.WaitFinal(before.PushID, 20*time.Second)

	// Pushes keep coming while the copies are taken.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 20 {
			a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "During the backup", Content: "c"})
		}
	}()
	db := filepath.Join(e.dataDir, "herald.db")
	copies := map[string]string{"vacuum": filepath.Join(t.TempDir(), "vacuum.db")}
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(`VACUUM INTO ?`, copies["vacuum"]); err != nil {
		t.Fatalf("VACUUM INTO while serving: %v", err)
	}
	conn.Close()
	if _, err := exec.LookPath("sqlite3"); err == nil {
		copies["sqlite3 .backup"] = filepath.Join(t.TempDir(), "online.db")
		if out, err := exec.Command("sqlite3", db, ".backup '"+copies["sqlite3 .backup"]+"'").CombinedOutput(); err != nil {
			t.Fatalf("sqlite3 .backup while serving: %v\n%s", err, out)
		}
	}
	<-done
	masterKey, err := os.ReadFile(filepath.Join(e.dataDir, "master-key"))
	if err != nil {
		t.Fatal(err)
	}
	for name, backup := range copies {
		t.Run(name, func(t *testing.T) { restoreAndSend(t, e, a, backup, masterKey, before.PushID) })
	}
}

// restoreAndSend starts a service on a data dir holding only the backup and
// the master key, and checks what it kept and that it still sends.
func restoreAndSend(t *testing.T, e *env, a testApp, backup string, masterKey []byte, oldPush string) {
	dir := t.TempDir()
	b, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "herald.db"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "master-key"), masterKey, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config{Addr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", DataDir: dir, AdminToken: e.adminTok,
		FCM: server.FCM{Endpoint: e.emuURL, Client: fcm.ClientOptions{AllowAnyTokenURI: true}}, Webhook: webhook.SenderOptions{AllowPrivate: true},
		LogLevel: "warn", LogFormat: "text"}
	svc, err := startService(context.Background(), cfg, io.Discard, io.Discard)
	if err != nil {
		t.Fatalf("start on the restored backup: %v", err)
	}
	t.Cleanup(func() { svc.shutdown() })
	restored := &env{t: t, svc: svc, emu: e.emu, emuURL: e.emuURL, adminTok: e.adminTok}
	restored.bind()
	if p := restored.Push(oldPush); p.Status != "done" || p.Counts.Sent != 2 {
		t.Fatalf("restored history: got %+v, want the push before the backup, done with 2 sent", p)
	}
	c := client.New(svc.PublicURL, a.APIKey, a.SecretKey, nil)
	res, err := c.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u2"}, Title: "After the restore", Content: "c"})
	if err != nil {
		t.Fatalf("push on the restored store: %v", err)
	}
	if p := restored.WaitFinal(res.PushID, 20*time.Second); p.Status != "done" || p.Counts.Sent != 1 {
		t.Fatalf("push after the restore: got %+v, want done with 1 sent (the credentials open with the key)", p)
	}
}
