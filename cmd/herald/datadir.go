package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// dataFiles are the files of the data dir that hold secrets or data: the
// database and its WAL, the generated keys, the lock.
var dataFiles = []string{"herald.db", "herald.db-wal", "herald.db-shm", "master-key", "admin-token", "lock"}

// prepareDataDir creates the data dir 0700 and tightens it and its files
// (0600) when an earlier version, a umask or an operator left them open to
// other users, saying so in the log.
func prepareDataDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := tighten(dir, 0o700, log); err != nil {
		return err
	}
	for _, name := range dataFiles {
		err := tighten(filepath.Join(dir, name), 0o600, log)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// tighten sets path's permissions to mode when they grant more to group or
// others.
func tighten(path string, mode fs.FileMode, log *slog.Logger) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	got := st.Mode().Perm()
	if got&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(path, mode); err != nil {
		return fmt.Errorf("tighten permissions of %s: %w", path, err)
	}
	log.Warn("tightened permissions", "path", path, "from", fmt.Sprintf("%04o", got), "to", fmt.Sprintf("%04o", mode))
	return nil
}
