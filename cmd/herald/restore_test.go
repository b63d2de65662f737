package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/internal/testenv"
)

// sendGate holds the emulator's answers to the tokens with its prefix
// until opened, counting the sends it holds.
type sendGate struct {
	prefix string
	mu     sync.Mutex
	seen   map[string]bool
	opened chan struct{}
}

func newSendGate(prefix string) *sendGate {
	return &sendGate{prefix: prefix, seen: map[string]bool{}, opened: make(chan struct{})}
}

func (g *sendGate) beforeAnswer(token string) {
	if !strings.HasPrefix(token, g.prefix) {
		return
	}
	g.mu.Lock()
	g.seen[token] = true
	g.mu.Unlock()
	<-g.opened
}

func (g *sendGate) held() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.seen)
}

// heraldCmd runs a command of the binary in this process.
func heraldCmd(t *testing.T, env map[string]string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut)
	return out.String() + errOut.String(), err
}

// accepted is what the stream had accepted, and when the answer came.
type accepted struct {
	userID, pushID string
	at             time.Time
}

// stream registers a user and pushes to it, again and again, until stop
// (at most 200 rounds), recording what was accepted.
func stream(a testApp, stop <-chan struct{}) (<-chan []accepted, func() int) {
	var mu sync.Mutex
	var got []accepted
	out := make(chan []accepted, 1)
	go func() {
		defer func() { mu.Lock(); out <- got; mu.Unlock() }()
		ctx := context.Background()
		for i := range 200 {
			select {
			case <-stop:
				return
			default:
			}
			u := fmt.Sprintf("s%d", i)
			if _, err := a.Client.RegisterPushToken(ctx, client.RegisterRequest{DeviceID: "dev-" + u, Token: "tok-" + u,
				Platform: "android", AppSourceVersion: "1.6.0", UserID: u}); err != nil {
				continue
			}
			res, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{u}, Title: "stream " + u, Content: "c"})
			if err != nil {
				continue
			}
			mu.Lock()
			got = append(got, accepted{userID: u, pushID: res.PushID, at: time.Now()})
			mu.Unlock()
		}
	}()
	return out, func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
}

// TestBackupRestoreHolds follows DESIGN 12: `herald backup` taken while
// registrations and pushes stream in, restored with `herald restore` into
// a new data dir, starts a server that has everything accepted before the
// backup began; the push that was sending at the copy's instant is held
// (listed by the restore) and sent nothing until released, then once
// more to each device whose send was in flight.
func TestBackupRestoreHolds(t *testing.T) {
	testenv.SQLiteOnly(t, "herald backup copies the embedded store")
	t.Parallel()
	ctx := context.Background()
	g := newSendGate("held-")
	e := startWith(t, emulator.Options{BeforeAnswer: g.beforeAnswer})
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1")
	e.Register(a, "held-", "h1", "h2", "h3")
	gated, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"h1", "h2", "h3"}, Title: "Gated", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the gated push's three sends in flight", 20*time.Second, func() bool { return g.held() == 3 })

	stop := make(chan struct{})
	result, count := stream(a, stop)
	waitFor(t, "the stream to get going", 20*time.Second, func() bool { return count() >= 5 })
	began := time.Now()
	backup := filepath.Join(t.TempDir(), "herald-backup.db")
	out, err := heraldCmd(t, nil, "backup", "--data-dir", e.dataDir, "--to", backup)
	close(stop)
	streamed := <-result
	if err != nil || !strings.Contains(out, "checked: integrity ok") {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	if st, err := os.Stat(backup); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v, mode %v; want 0600", err, st.Mode())
	}
	close(g.opened) // the original server sends the gated push, after the copy's instant
	e.WaitFinal(gated.PushID, 20*time.Second)
	e.stop()
	sentBefore := e.SentTo(gated.PushID)

	dir := filepath.Join(t.TempDir(), "restored") // absent: restore makes it
	out, err = heraldCmd(t, nil, "restore", "--from", backup, "--data-dir", dir, "--master-key-file", filepath.Join(e.dataDir, "master-key"))
	if err != nil || !strings.Contains(out, gated.PushID) {
		t.Fatalf("restore: %v, want the gated push listed held:\n%s", err, out)
	}
	restored := &env{t: t, emu: e.emu, emuURL: e.emuURL, logs: newSyncBuffer(), dataDir: dir, adminTok: e.adminTok}
	restored.startService()

	for _, s := range streamed {
		if !s.at.Before(began) {
			continue
		}
		if u := restored.UserView(a, s.userID); len(u.Devices) != 1 {
			t.Errorf("user %s, registered before the backup: got %+v, want its device", s.userID, u)
		}
		if code := restored.AdminJSON("GET", "/admin/v1/pushes/"+s.pushID, nil, nil); code != http.StatusOK {
			t.Errorf("push %s, accepted before the backup: got %d, want 200", s.pushID, code)
		}
	}
	if p := restored.Push(gated.PushID); p.Status != "held" {
		t.Fatalf("gated push after the restore: got %s, want held", p.Status)
	}
	// The restored server sends: a new push goes out, the held one not.
	c := client.New(restored.svc.PublicURL, a.APIKey, a.SecretKey, nil)
	res, err := c.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "After the restore", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if p := restored.WaitFinal(res.PushID, 20*time.Second); p.Status != "done" || p.Counts.Sent != 1 {
		t.Fatalf("push after the restore: got %+v, want done with 1 sent", p)
	}
	if got := restored.SentTo(gated.PushID); !mapsEqual(got, sentBefore) || restored.Push(gated.PushID).Status != "held" {
		t.Fatalf("held push before its release: got sends %v and status %s, want %v and held", got, restored.Push(gated.PushID).Status, sentBefore)
	}

	var released pushView
	if code := restored.AdminJSON("POST", "/admin/v1/pushes/"+gated.PushID+"/release", nil, &released); code != http.StatusOK || released.Status != "sending" {
		t.Fatalf("release: got %d %+v, want 200 sending", code, released)
	}
	if p := restored.WaitFinal(gated.PushID, 20*time.Second); p.Status != "done" || p.Counts.Sent != 3 {
		t.Fatalf("released push: got %+v, want done with 3 sent", p)
	}
	for _, tok := range []string{"held-h1", "held-h2", "held-h3"} {
		if got := restored.SentTo(gated.PushID)[tok]; got != sentBefore[tok]+1 {
			t.Errorf("%s: got %d messages, want %d (its send was in flight at the copy's instant: sent once more)", tok, got, sentBefore[tok]+1)
		}
	}
	res2 := restored.AdminDo(t, "POST", "/admin/v1/pushes/"+gated.PushID+"/release", nil)
	testenv.WantError(t, res2, "/admin/v1/pushes/"+gated.PushID+"/release", herald.NotHeld(herald.StatusDone))
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRestoreRefusals: a restore refuses a data dir that is not empty,
// naming it; a truncated or damaged file, and a copy with sealed secrets
// without its master key (or with another), each leaving the directory
// empty. A backup refuses PostgreSQL and a file that exists.
func TestRestoreRefusals(t *testing.T) {
	testenv.SQLiteOnly(t, "herald backup copies the embedded store")
	t.Parallel()
	e := start(t)
	e.NewApp(nil) // its FCM credentials are sealed with the master key
	backup := filepath.Join(t.TempDir(), "herald-backup.db")
	if out, err := heraldCmd(t, nil, "backup", "--data-dir", e.dataDir, "--to", backup); err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	keyFile := filepath.Join(e.dataDir, "master-key")
	b, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(t.TempDir(), "truncated.db")
	damaged := filepath.Join(t.TempDir(), "damaged.db")
	otherKey := filepath.Join(t.TempDir(), "other-key")
	mustWrite(t, truncated, b[:len(b)/2])
	mid := bytes.Clone(b)
	for i := 4096 * 3; i < 4096*6 && i < len(mid); i++ {
		mid[i] = 0xA5
	}
	mustWrite(t, damaged, mid)
	mustWrite(t, otherKey, []byte(herald.NewMasterKeyText()))

	t.Run("ErrNotEmpty", func(t *testing.T) {
		dir := t.TempDir()
		mustWrite(t, filepath.Join(dir, "notes.txt"), []byte("x"))
		out, err := heraldCmd(t, nil, "restore", "--from", backup, "--data-dir", dir, "--master-key-file", keyFile)
		if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "not empty") {
			t.Fatalf("got %v (%s), want refused naming %s as not empty", err, out, dir)
		}
		if names := dirNames(t, dir); len(names) != 1 || names[0] != "notes.txt" {
			t.Errorf("data dir: got %v, want it untouched", names)
		}
	})
	for _, c := range []struct {
		name, from string
		env        map[string]string
		args       []string
		want       string
	}{
		{"ErrTruncated", truncated, nil, []string{"--master-key-file", keyFile}, "malformed"},
		{"ErrDamaged", damaged, nil, []string{"--master-key-file", keyFile}, ""},
		{"ErrNoMasterKey", backup, nil, nil, "--master-key-file or HERALD_MASTER_KEY"},
		{"ErrOtherMasterKey", backup, nil, []string{"--master-key-file", otherKey}, "does not open the backup's secrets"},
		{"ErrOtherMasterKeyEnv", backup, map[string]string{"HERALD_MASTER_KEY": herald.NewMasterKeyText()}, nil, "does not open"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			out, err := heraldCmd(t, c.env, append([]string{"restore", "--from", c.from, "--data-dir", dir}, c.args...)...)
			if err == nil || !strings.Contains(err.Error(), "left empty") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v (%s), want refused (%q) with the dir left empty", err, out, c.want)
			}
			if names := dirNames(t, dir); len(names) != 0 {
				t.Errorf("data dir: got %v, want empty", names)
			}
		})
	}
	t.Run("OK", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		key, _ := os.ReadFile(keyFile)
		out, err := heraldCmd(t, map[string]string{"HERALD_MASTER_KEY": string(key)}, "restore", "--from", backup, "--data-dir", dir)
		if err != nil || !strings.Contains(out, "none is held") {
			t.Fatalf("restore: %v\n%s", err, out)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "master-key")); strings.TrimSpace(string(got)) != strings.TrimSpace(string(key)) {
			t.Errorf("master-key in the data dir: got %q, want the key given", got)
		}
	})
	t.Run("ErrBackup", func(t *testing.T) {
		_, err := heraldCmd(t, map[string]string{"HERALD_DATABASE_URL": "postgres://h@127.0.0.1/h"}, "backup", "--to", filepath.Join(t.TempDir(), "b.db"))
		if err == nil || !strings.Contains(err.Error(), "docs/operations.md") {
			t.Errorf("backup on PostgreSQL: got %v, want refused pointing at docs/operations.md", err)
		}
		_, err = heraldCmd(t, nil, "backup", "--data-dir", e.dataDir, "--to", backup)
		if err == nil || !strings.Contains(err.Error(), "exists") {
			t.Errorf("backup over a file: got %v, want refused", err)
		}
	})
}

func mustWrite(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// dirNames lists a directory's entries; none when it is absent.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestRestoreHoldOnly: `herald restore --hold-only --at T` holds, on a
// store restored by other means (PostgreSQL's dump, or the data dir as it
// is), the pushes scheduled and due at T, and lists them; the service
// started on it then shows them held. It runs on the engine the tests run
// on.
func TestRestoreHoldOnly(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1")
	seoul, err := time.LoadLocation("Asia/Seoul")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(time.Hour).Truncate(time.Minute)
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "Later", Content: "c",
		Options: &client.Options{ScheduleTime: at.In(seoul).Format("2006-01-02T15:04")}})
	if err != nil {
		t.Fatal(err)
	}
	e.stop()
	env := map[string]string{"HERALD_DATABASE_URL": e.dbURL}
	out, err := heraldCmd(t, env, "restore", "--hold-only", "--data-dir", e.dataDir, "--at", at.Add(-time.Minute).Format(time.RFC3339))
	if err != nil || !strings.Contains(out, "none is held") {
		t.Fatalf("hold before its time: %v\n%s", err, out)
	}
	out, err = heraldCmd(t, env, "restore", "--hold-only", "--data-dir", e.dataDir, "--at", at.Format(time.RFC3339))
	if err != nil || !strings.Contains(out, res.PushID) {
		t.Fatalf("hold at its time: %v, want %s listed\n%s", err, res.PushID, out)
	}
	e.startService()
	if p := e.Push(res.PushID); p.Status != "held" {
		t.Fatalf("after --hold-only: got %s, want held", p.Status)
	}
}
