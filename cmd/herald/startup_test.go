package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBusyPortNamesListener starts serve on a port another socket holds:
// the error names the listener, its address and the setting that moves it,
// and nothing was done before the refusal: no admin token generated (and
// "shown once" to nobody), no database created in the data dir, no job
// queue started and cancelled (River's "Error starting transaction").
func TestBusyPortNamesListener(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	for _, tt := range []struct{ flag, want string }{
		{"--addr", "public listener " + addr + " (--addr / HERALD_ADDR): address already in use"},
		{"--admin-addr", "admin listener " + addr + " (--admin-addr / HERALD_ADMIN_ADDR): address already in use"},
	} {
		t.Run(tt.flag, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			args := []string{"serve", "--data-dir", dir, "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0", tt.flag, addr}
			out, logs, err := heraldCLI(t, nil, args...)
			if err == nil || err.Error() != tt.want {
				t.Errorf("got %v, want %q", err, tt.want)
			}
			if strings.Contains(out, "admin token") {
				t.Errorf("printed %q, want no generated admin token", out)
			}
			if strings.Contains(logs, "Error") || strings.Contains(logs, "context canceled") {
				t.Errorf("logged %q, want no errors of a start undone", logs)
			}
			if entries, err := os.ReadDir(dir); !os.IsNotExist(err) {
				t.Errorf("data dir: got %v (%v), want it not created", entries, err)
			}
		})
	}
}

// TestShortAdminTokenRefused starts serve with an admin token under 16
// characters, set each way: it refuses to start, naming where it was set.
func TestShortAdminTokenRefused(t *testing.T) {
	t.Parallel()
	const want = ": the admin token is 5 characters; it must be at least 16"
	t.Run("Flag", func(t *testing.T) {
		_, _, err := heraldCLI(t, nil, "serve", "--data-dir", t.TempDir(), "--admin-token", "short")
		if err == nil || !strings.HasPrefix(err.Error(), "--admin-token"+want) {
			t.Errorf("got %v, want --admin-token%s…", err, want)
		}
	})
	t.Run("Environment", func(t *testing.T) {
		env := map[string]string{"HERALD_ADMIN_TOKEN": "short", "HERALD_DATA_DIR": t.TempDir()}
		_, _, err := heraldCLI(t, func(k string) string { return env[k] }, "serve")
		if err == nil || !strings.HasPrefix(err.Error(), "HERALD_ADMIN_TOKEN"+want) {
			t.Errorf("got %v, want HERALD_ADMIN_TOKEN%s…", err, want)
		}
	})
	t.Run("DataDirFile", func(t *testing.T) {
		dir := t.TempDir()
		file := filepath.Join(dir, "admin-token")
		if err := os.WriteFile(file, []byte("short\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := heraldCLI(t, nil, "serve", "--data-dir", dir, "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0")
		if err == nil || !strings.HasPrefix(err.Error(), file+want) {
			t.Errorf("got %v, want %s%s…", err, file, want)
		}
	})
	t.Run("SixteenAccepted", func(t *testing.T) {
		if err := checkAdminToken(strings.Repeat("x", 16), "--admin-token"); err != nil {
			t.Errorf("16 characters: got %v, want accepted", err)
		}
	})
}

// TestMigrateSaysWhenNothingToApply runs migrate twice on one data dir.
func TestMigrateSaysWhenNothingToApply(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, _, err := heraldCLI(t, nil, "migrate", "--data-dir", dir)
	var n int
	if _, serr := fmt.Sscanf(out, "herald: %d migrations applied\n", &n); err != nil || serr != nil || n == 0 {
		t.Fatalf("first migrate: got %q, %v; want \"herald: N migrations applied\"", out, err)
	}
	out, _, err = heraldCLI(t, nil, "migrate", "--data-dir", dir)
	if want := "herald: nothing to apply: the database schema is current\n"; err != nil || out != want {
		t.Errorf("second migrate: got %q, %v; want %q", out, err, want)
	}
}

// TestGeneratedAdminTokenNotPrinted: a generated admin token is written to
// the data dir's admin-token file (0600) and only the file is printed, as
// text and as a JSON line; `serve --demo` names the file and puts
// $(cat FILE) where its commands need the token.
func TestGeneratedAdminTokenNotPrinted(t *testing.T) {
	t.Parallel()
	getenv := func(string) string { return "" }
	for _, c := range []struct {
		name string
		args []string
	}{
		{"Text", nil},
		{"JSON", []string{"--log-format", "json"}},
		{"Demo", []string{"--demo", "--demo-fcm-addr", "127.0.0.1:0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			file := filepath.Join(dir, "admin-token")
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0", "--data-dir", dir, "--log-level", "warn"}, c.args...)
			r := runInBackground(t, getenv, args...)
			if c.name == "JSON" {
				r.waitOutput(regexp.MustCompile(`"msg":"listening"`))
			} else {
				r.waitOutput(listening)
			}
			switch c.name {
			case "JSON":
				r.waitOutput(regexp.MustCompile(`"msg":"generated admin token","file":"` + regexp.QuoteMeta(file) + `"`))
			case "Demo":
				r.waitOutput(regexp.MustCompile(`Authorization: Bearer ` + regexp.QuoteMeta("$(cat "+file+")")))
				r.waitOutput(regexp.MustCompile(`sign in with the admin token in ` + regexp.QuoteMeta(file)))
			default:
				r.waitOutput(regexp.MustCompile(`generated an admin token into ` + regexp.QuoteMeta(file) + ` \(mode 0600\)`))
			}
			token := readAdminToken(t, dir)
			if strings.Contains(r.out.String(), token) {
				t.Errorf("the generated token is printed:\n%s", r.out.String())
			}
			if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("admin-token file: %v, %v; want mode 600", st.Mode(), err)
			}
			if err := r.stop(); err != nil {
				t.Errorf("stop: %v", err)
			}
		})
	}
}
