package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/heraldpush/herald/sqlite"
)

// TestBackupMode: a backup is 0600 from its first byte, and so are the
// WAL and shared-memory files SQLite makes beside it when the copy is
// opened (herald backup's check), under a umask that would leave others
// reading them. Not parallel: the umask is the process's.
func TestBackupMode(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	ctx := context.Background()
	db, src := openMigrated(t)
	db.Close()
	dst := filepath.Join(t.TempDir(), "backup.db.partial")
	if err := sqlite.Backup(ctx, src, dst); err != nil {
		t.Fatal(err)
	}
	wantMode(t, dst)
	copyDB, err := sqlite.Open(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	defer copyDB.Close()
	if _, err := copyDB.Writer.ExecContext(ctx, `CREATE TABLE written (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dst, dst + "-wal", dst + "-shm"} {
		wantMode(t, p)
	}
	if err := sqlite.Backup(ctx, src, dst); err == nil {
		t.Error("a backup over an existing file: no error")
	}
}

func wantMode(t *testing.T, path string) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := st.Mode().Perm(); m != 0o600 {
		t.Errorf("%s: mode %o, want 600", filepath.Base(path), m)
	}
}
