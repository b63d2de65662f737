package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

// wantModes fails unless each of dir's files named in want has that mode.
func wantModes(t *testing.T, dir string, want map[string]os.FileMode) {
	t.Helper()
	for name, mode := range want {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := st.Mode().Perm(); got != mode {
			t.Errorf("%s: got mode %04o, want %04o", name, got, mode)
		}
	}
}

var secureModes = map[string]os.FileMode{
	".": 0o700, "herald.db": 0o600, "herald.db-wal": 0o600, "herald.db-shm": 0o600,
	"master-key": 0o600, "admin-token": 0o600, "lock": 0o600,
}

// TestDataDirCreatedPrivate starts on a data dir that does not exist yet:
// the dir is made 0700 and every file in it 0600, the database's WAL and
// shared-memory files included.
func TestDataDirCreatedPrivate(t *testing.T) {
	testenv.SQLiteOnly(t, "the embedded store's data dir")
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	e := start(t, func(c *config) { c.DataDir, c.AdminToken = dir, "" })
	e.adminTok = e.svc.AdminToken // generated into the data dir
	e.NewAppWithoutFCM(nil)       // a write through the WAL
	wantModes(t, dir, secureModes)
	if strings.Contains(e.logs.String(), "tightened permissions") {
		t.Errorf("log: got a tightening on a new data dir, want none")
	}
}

// TestDataDirTightened starts on a data dir left 0755 with its database
// and keys 0644: each is tightened before use, and the log says so.
func TestDataDirTightened(t *testing.T) {
	testenv.SQLiteOnly(t, "the embedded store's data dir")
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"herald.db":   "", // an empty file is an empty SQLite database
		"master-key":  herald.NewMasterKeyText() + "\n",
		"admin-token": "ha_" + herald.NewSecretKey()[3:] + "\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// WriteFile's mode is masked by the umask; set the loose modes for sure.
	for _, p := range []string{dir, filepath.Join(dir, "herald.db"), filepath.Join(dir, "master-key"), filepath.Join(dir, "admin-token")} {
		mode := os.FileMode(0o644)
		if p == dir {
			mode = 0o755
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	e := start(t, func(c *config) { c.DataDir, c.AdminToken = dir, "" })
	e.adminTok = e.svc.AdminToken
	e.NewAppWithoutFCM(nil)
	wantModes(t, dir, secureModes)
	logs := e.logs.String()
	for _, name := range []string{dir, filepath.Join(dir, "herald.db"), filepath.Join(dir, "master-key"), filepath.Join(dir, "admin-token")} {
		if !strings.Contains(logs, "msg=\"tightened permissions\" path="+name+" from=") {
			t.Errorf("log: got no tightening line for %s in:\n%s", name, logs)
		}
	}
}

// TestDataDirUnusableNamesSetting starts serve and migrate on a data dir
// that cannot be created (its parent is a file, which fails for root
// too): the error names the directory and --data-dir / HERALD_DATA_DIR.
func TestDataDirUnusableNamesSetting(t *testing.T) {
	t.Parallel()
	parent := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(parent, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "data")
	for cmd, args := range map[string][]string{
		"serve":   {"serve", "--data-dir", dir, "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0"},
		"migrate": {"migrate", "--data-dir", dir},
	} {
		_, _, err := heraldCLI(t, nil, args...)
		if err == nil || !strings.Contains(err.Error(), "data dir "+dir+" (--data-dir / HERALD_DATA_DIR) cannot be used") ||
			!strings.Contains(err.Error(), "not a directory") {
			t.Errorf("%s: got %v, want an error naming %s, --data-dir / HERALD_DATA_DIR and the cause", cmd, err, dir)
		}
	}
}
