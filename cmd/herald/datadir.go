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

// prepareDataDir creates the data dir 0700, checks that it can be written,
// and tightens it and its files (0600) when an earlier version, a umask or
// an operator left them open to other users, saying so in the log. Its
// errors name the setting that chooses another directory.
func prepareDataDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return dataDirError(dir, err)
	}
	if err := checkWritable(dir); err != nil {
		return dataDirError(dir, err)
	}
	if err := tighten(dir, 0o700, log); err != nil {
		return dataDirError(dir, err)
	}
	for _, name := range dataFiles {
		err := tighten(filepath.Join(dir, name), 0o600, log)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return dataDirError(dir, err)
		}
	}
	return nil
}

// dataDirError says that the data dir cannot be used, why, and how to
// choose another or fix this one.
func dataDirError(dir string, err error) error {
	return fmt.Errorf("data dir %s (--data-dir / HERALD_DATA_DIR) cannot be used: %w; give a directory this user can "+
		"create and write with --data-dir or HERALD_DATA_DIR, or make this one owned and writable by this user", dir, err)
}

// checkWritable creates and removes a file in dir: a directory the
// service cannot write fails here, before the store and the lock.
func checkWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err != nil {
		return err
	}
	return errors.Join(f.Close(), os.Remove(f.Name()))
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
