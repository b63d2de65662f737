package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/heraldpush/herald/sqlite"
)

// backupPostgres is the refusal of backup and restore on PostgreSQL.
const backupPostgres = "the database is PostgreSQL (--database-url / HERALD_DATABASE_URL): back it up with pg_dump or " +
	"point-in-time recovery and restore it with pg_restore, then hold its pushes with `herald restore --hold-only`; " +
	"see docs/operations.md, Backup and restore"

// runBackup is `herald backup --to FILE`: a consistent copy of the
// embedded store taken while it serves, opened and checked before it is
// said done.
func runBackup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := newCommand("backup", "herald backup --to FILE [--data-dir DIR]",
		"Copies the embedded store (the data dir's herald.db) into FILE, a new file, while herald serve runs on it:\n"+
			"the copy is the store as it stood at one instant (SQLite's VACUUM INTO). The copy is then opened and checked\n"+
			"(integrity check, schema version) before the command says it is done. The master key is not in the copy:\n"+
			"keep it apart (`herald restore` asks for it). PostgreSQL is backed up with its own tools (docs/operations.md).")
	to := cmd.fs.String("to", "", "the backup file to write (must not exist)")
	dataDir := cmd.fs.String("data-dir", envOr(getenv, "HERALD_DATA_DIR", "./herald-data"), "data directory of the embedded store (HERALD_DATA_DIR)")
	databaseURL := cmd.fs.String("database-url", getenv("HERALD_DATABASE_URL"), "postgres:// URL: refused, see docs/operations.md (HERALD_DATABASE_URL)")
	if _, err := cmd.parse(args, stdout); err != nil {
		return err
	}
	switch {
	case *databaseURL != "":
		return errors.New("herald backup copies the embedded store; " + backupPostgres)
	case *to == "":
		return cmd.explain(errors.New("--to: give the file to write the backup to"))
	}
	src := filepath.Join(*dataDir, "herald.db")
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("no store to back up in the data dir %s (--data-dir / HERALD_DATA_DIR): %w", *dataDir, err)
	}
	partial := *to + ".partial"
	if _, err := os.Lstat(*to); err == nil {
		return fmt.Errorf("--to %s exists: a backup is written to a new file", *to)
	}
	os.Remove(partial) // a run that died before its checks
	if err := sqlite.Backup(ctx, src, partial); err != nil {
		os.Remove(partial)
		return err
	}
	at := time.Now().UTC() // after the copy's instant: the restore holds what was due by then
	version, err := checkCopy(ctx, partial, at)
	if err == nil {
		err = os.Chmod(partial, 0o600) // it holds what the store holds
	}
	if err == nil {
		err = os.Rename(partial, *to)
	}
	if err != nil {
		return errors.Join(fmt.Errorf("the copy was refused and removed: %w", err), os.Remove(partial))
	}
	st, err := os.Stat(*to)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "herald: backup of %s written to %s (%d bytes, schema version %d, taken %s); checked: integrity ok\n",
		src, *to, st.Size(), version, at.Format(time.RFC3339))
	return nil
}

// checkCopy opens a copy, checks it whole and its schema, and records in
// it the instant at; it returns the copy's schema version.
func checkCopy(ctx context.Context, path string, at time.Time) (int64, error) {
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	if err := db.Check(ctx); err != nil {
		return 0, err
	}
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("read the schema version: %w", err)
	}
	if v.Database == 0 {
		return 0, errors.New("it holds no Herald schema")
	}
	return v.Database, db.SetBackupAt(ctx, at)
}

// envOr is the variable's value, or def when it is unset.
func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}
