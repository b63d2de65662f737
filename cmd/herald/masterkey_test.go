package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/sqlite"
)

// tryStart starts the service on e's data dir as the harness does, but
// hands back the error instead of failing the test.
func (e *env) tryStart(tweak ...func(*config)) (*service, error) {
	svc, err := startService(context.Background(), e.config(tweak...), io.Discard, e.logs)
	if err == nil {
		e.t.Cleanup(func() { svc.shutdown() })
	}
	return svc, err
}

// stop shuts the running service down.
func (e *env) stop() {
	e.t.Helper()
	if err := e.svc.shutdown(); err != nil {
		e.t.Fatalf("shutdown: %v", err)
	}
}

func withKey(key string) func(*config) { return func(c *config) { c.MasterKey = key } }

// pushOne sends one push to a user with one device and waits until it is
// done with one message sent: the app's sealed FCM credentials opened.
func (e *env) pushOne(a testApp, userID string) {
	e.t.Helper()
	c := client.New(e.svc.PublicURL, a.APIKey, a.SecretKey, nil) // this run's port
	res, err := c.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{userID}, Title: "t", Content: "c"})
	if err != nil {
		e.t.Fatalf("push: %v", err)
	}
	if p := e.WaitFinal(res.PushID, 30*time.Second); p.Status != "done" || p.Counts.Sent != 1 {
		e.t.Fatalf("push: got %s with %d sent (%s), want done with 1 sent", p.Status, p.Counts.Sent, p.FailureReason)
	}
}

// wantKeyMismatch fails unless err is the start refusal naming the master key.
func wantKeyMismatch(t *testing.T, err error, mentions string) {
	t.Helper()
	if !errors.Is(err, herald.ErrMasterKeyMismatch) || !strings.Contains(err.Error(), "master key does not match") ||
		!strings.Contains(err.Error(), mentions) {
		t.Fatalf("start: got %v, want the master key mismatch naming %s", err, mentions)
	}
}

// TestMasterKeyCheckAtStart starts with key A (an app with sealed FCM
// credentials and webhook secret), stops, starts with key B: refused with
// a message naming the master key. With A again it starts and pushes.
func TestMasterKeyCheckAtStart(t *testing.T) {
	t.Parallel()
	keyA, keyB := herald.NewMasterKeyText(), herald.NewMasterKeyText()
	e := start(t, withKey(keyA))
	a := e.NewApp(nil)
	e.PutWebhook(a, testenv.NewReceiver(t, 0).URL)
	e.Device(a, "d1", "tok-mk-1", "android", "1.6.0", "u1")
	e.stop()

	_, err := e.tryStart(withKey(keyB))
	wantKeyMismatch(t, err, "HERALD_MASTER_KEY")
	t.Logf("refused: %v", err)

	svc, err := e.tryStart(withKey(keyA))
	if err != nil {
		t.Fatalf("start with the original key: %v", err)
	}
	e.svc = svc
	e.bind()
	e.pushOne(a, "u1")
}

// TestMasterKeyCheckUpgrade: a database written before check values (sealed
// secrets, no check) is verified by opening a sealed value; the wrong key
// is refused and stores nothing, the right one stores the check.
func TestMasterKeyCheckUpgrade(t *testing.T) {
	testenv.SQLiteOnly(t, "edits the SQLite file directly")
	t.Parallel()
	keyA, keyB := herald.NewMasterKeyText(), herald.NewMasterKeyText()
	e := start(t, withKey(keyA))
	a := e.NewApp(nil)
	e.Device(a, "d1", "tok-up-1", "android", "1.6.0", "u1")
	e.stop()
	dropKeyCheck(t, e.dataDir)

	_, err := e.tryStart(withKey(keyB))
	wantKeyMismatch(t, err, "HERALD_MASTER_KEY")
	if hasKeyCheck(t, e.dataDir) {
		t.Fatalf("the refused key left a check value behind")
	}
	svc, err := e.tryStart(withKey(keyA))
	if err != nil {
		t.Fatalf("start with the original key: %v", err)
	}
	e.svc = svc
	e.bind()
	e.pushOne(a, "u1")
	e.stop()
	if !hasKeyCheck(t, e.dataDir) {
		t.Errorf("no check value stored after the upgrade start")
	}
}

// TestMasterKeyFileMissing: the data dir's generated key file is lost;
// the next start generates a new one, finds it does not match and refuses,
// removing the useless new file. Restoring the file starts the service.
func TestMasterKeyFileMissing(t *testing.T) {
	testenv.SQLiteOnly(t, "the master-key file of the data dir")
	t.Parallel()
	e := start(t)
	e.NewApp(nil)
	e.stop()
	file := filepath.Join(e.dataDir, "master-key")
	original, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	_, err = e.tryStart()
	wantKeyMismatch(t, err, "was missing")
	if _, serr := os.Stat(file); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("generated key file: got %v, want it removed", serr)
	}
	if err := os.WriteFile(file, original, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.tryStart(); err != nil {
		t.Fatalf("start with the restored file: %v", err)
	}
}

func dropKeyCheck(t *testing.T, dataDir string) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(dataDir, "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Writer.Exec(`DELETE FROM meta WHERE name = 'master-key-check'`); err != nil {
		t.Fatal(err)
	}
}

func hasKeyCheck(t *testing.T, dataDir string) bool {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(dataDir, "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.MasterKeyCheck(context.Background())
	if err != nil && !errors.Is(err, herald.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}
