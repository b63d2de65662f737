package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/server"
	"github.com/heraldpush/herald/sqlite"
)

// restoreFlags are the settings of `herald restore`.
type restoreFlags struct {
	from, dataDir, databaseURL, masterKeyFile string
	holdOnly                                  bool
	at                                        string
}

// runRestore is `herald restore --from FILE`: a backup put into an empty
// data dir, checked, with the master key, and its pushes that were due or
// sending at the copy's instant held (DESIGN 12). With --hold-only it
// only holds them, on a store restored by other means (PostgreSQL's).
func runRestore(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := newCommand("restore", "herald restore --from FILE [--data-dir DIR] [--master-key-file FILE] | herald restore --hold-only [--at TIME]",
		"Fills an empty (or absent) data directory with a backup `herald backup` made (or a copy SQLite's .backup or\n"+
			"VACUUM INTO made), after checking it whole: a damaged or truncated file is refused and the directory left\n"+
			"empty. The master key the copy's secrets are sealed with is given with --master-key-file or\n"+
			"HERALD_MASTER_KEY (required when the copy holds FCM credentials or webhook secrets) and written into the\n"+
			"data dir. The pushes that were sending, or scheduled and due, at the copy's instant are held (status held)\n"+
			"and listed: each is sent only once an operator releases it (or cancelled) in the dashboard or admin API.\n"+
			"--hold-only holds them on the configured store (HERALD_DATABASE_URL, or the data dir's) as it is, for a\n"+
			"database restored by its own tools; run it before any herald serve starts on the restored database.")
	var f restoreFlags
	cmd.fs.StringVar(&f.from, "from", "", "the backup file to restore")
	cmd.fs.StringVar(&f.dataDir, "data-dir", envOr(getenv, "HERALD_DATA_DIR", "./herald-data"), "the data directory to fill: empty or absent (HERALD_DATA_DIR)")
	cmd.fs.StringVar(&f.databaseURL, "database-url", getenv("HERALD_DATABASE_URL"), "postgres:// URL, with --hold-only (HERALD_DATABASE_URL)")
	cmd.fs.StringVar(&f.masterKeyFile, "master-key-file", "", "a file holding the master key the backup's secrets are sealed with (else HERALD_MASTER_KEY)")
	cmd.fs.BoolVar(&f.holdOnly, "hold-only", false, "only hold the pushes due or sending at --at, on the configured store")
	cmd.fs.StringVar(&f.at, "at", "", "with --hold-only: the instant the restored database stands at (RFC 3339; default now, which holds the most)")
	if _, err := cmd.parse(args, stdout); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if f.holdOnly {
		return holdOnly(ctx, cmd, f, stdout, log)
	}
	switch {
	case f.databaseURL != "":
		return errors.New("herald restore fills an embedded data dir; " + backupPostgres)
	case f.from == "":
		return cmd.explain(errors.New("--from: give the backup file to restore"))
	}
	key, err := masterKeyFrom(f.masterKeyFile, getenv)
	if err != nil {
		return err
	}
	if _, err := os.Stat(f.from); err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	if err := emptyDataDir(f.dataDir); err != nil {
		return err
	}
	held, at, err := restoreInto(ctx, f.from, f.dataDir, key, log)
	if err != nil {
		// The directory was empty: what the restore wrote goes, all of it.
		return errors.Join(fmt.Errorf("restore refused, the data dir %s left empty: %w", f.dataDir, err), emptyOut(f.dataDir))
	}
	fmt.Fprintf(stdout, "herald: restored %s into %s (the store as it stood at %s)\n", f.from, f.dataDir, at.Format(time.RFC3339))
	listHeld(stdout, held)
	return nil
}

// emptyDataDir makes sure dir is an empty directory, creating it (0700)
// when absent; a directory with anything in it is refused, named.
func emptyDataDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.MkdirAll(dir, 0o700)
	case err != nil:
		return dataDirError(dir, err)
	case len(entries) > 0:
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return fmt.Errorf("the data dir %s (--data-dir / HERALD_DATA_DIR) is not empty (it holds %s): a restore fills an empty "+
			"or absent directory and never overwrites a store; move it aside or give another --data-dir", dir, strings.Join(names, ", "))
	}
	return nil
}

// emptyOut removes what a refused restore wrote in dir.
func emptyOut(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, os.RemoveAll(filepath.Join(dir, e.Name())))
	}
	return errors.Join(errs...)
}

// restoreInto copies the backup into the empty dir, checks it, migrates
// it as serve would, checks the master key and writes it there, and holds
// the pushes due or sending at the copy's instant.
func restoreInto(ctx context.Context, from, dir, key string, log *slog.Logger) ([]herald.Push, time.Time, error) {
	lock, err := lockDataDir(dir, log)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer lock.Close()
	path := filepath.Join(dir, "herald.db")
	if err := copyFile(from, path); err != nil {
		return nil, time.Time{}, err
	}
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer db.Close()
	if err := db.Check(ctx); err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %w", from, err)
	}
	v, err := db.SchemaVersion(ctx)
	switch {
	case err != nil:
		return nil, time.Time{}, fmt.Errorf("%s holds no Herald store: %w", from, err)
	case v.Database == 0:
		return nil, time.Time{}, fmt.Errorf("%s holds no Herald store", from)
	case v.Newer():
		return nil, time.Time{}, fmt.Errorf("%s is at schema version %d, newer than this binary's %d: restore it with the herald that made it", from, v.Database, v.Binary)
	}
	if err := restoreKey(ctx, db, dir, key); err != nil {
		return nil, time.Time{}, err
	}
	if _, err := db.MigrateUp(ctx); err != nil {
		return nil, time.Time{}, err
	}
	if err := db.ForgetLeader(ctx); err != nil {
		return nil, time.Time{}, err
	}
	at, err := db.BackupAt(ctx)
	if errors.Is(err, herald.ErrNotFound) {
		at, err = time.Now().UTC(), nil // a copy made by hand: hold what is due now, the most
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	held, err := db.HoldPushes(ctx, at)
	return held, at, err
}

// restoreKey checks the master key against the copy's sealed secrets and
// writes it into the data dir, where serve finds it. Without a key, a
// copy that holds sealed secrets (or the key's check) is refused: serve
// would make a new key that opens none of them.
func restoreKey(ctx context.Context, db *sqlite.DB, dir, text string) error {
	if text == "" {
		_, sealedErr := db.SealedSample(ctx)
		_, checkErr := db.MasterKeyCheck(ctx)
		for _, err := range []error{sealedErr, checkErr} {
			if err == nil {
				return errors.New("the backup holds secrets sealed with a master key (FCM credentials, webhook secrets): give the key " +
					"with --master-key-file or HERALD_MASTER_KEY")
			} else if !errors.Is(err, herald.ErrNotFound) {
				return err
			}
		}
		return nil
	}
	key, err := herald.ParseMasterKey(text)
	if err != nil {
		return fmt.Errorf("master key: %w", err)
	}
	if err := herald.VerifyMasterKey(ctx, db.Store, key); err != nil {
		if errors.Is(err, herald.ErrMasterKeyMismatch) {
			return fmt.Errorf("%w: the key given does not open the backup's secrets; give the key the backed-up server used", err)
		}
		return err
	}
	return os.WriteFile(filepath.Join(dir, "master-key"), []byte(text+"\n"), 0o600)
}

// copyFile copies from into a new file to (0600), synced.
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	return errors.Join(err, out.Close())
}

// holdOnly holds the pushes of the configured store as it stands: a
// PostgreSQL database restored by pg_restore or recovered to a point in
// time, before any node serves it.
func holdOnly(ctx context.Context, cmd *command, f restoreFlags, stdout io.Writer, log *slog.Logger) error {
	at := time.Now().UTC()
	if f.at != "" {
		t, err := time.Parse(time.RFC3339, f.at)
		if err != nil {
			return cmd.explain(fmt.Errorf("--at: %q is not an RFC 3339 time", f.at))
		}
		at = t
	}
	if f.databaseURL == "" {
		if _, err := os.Stat(filepath.Join(f.dataDir, "herald.db")); err != nil {
			return fmt.Errorf("no store to hold pushes in, in the data dir %s (--data-dir / HERALD_DATA_DIR): %w", f.dataDir, err)
		}
		lock, err := lockDataDir(f.dataDir, log)
		if err != nil {
			return err
		}
		defer lock.Close()
	}
	db, store, _, err := server.Open(ctx, f.databaseURL, filepath.Join(f.dataDir, "herald.db"))
	if db != nil {
		defer db.Close()
	}
	if err != nil {
		return err
	}
	held, err := store.HoldPushes(ctx, at)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "herald: held the pushes sending, or scheduled and due, at %s\n", at.Format(time.RFC3339))
	listHeld(stdout, held)
	return nil
}

// listHeld lists the held pushes, one a line, and what to do with them.
func listHeld(w io.Writer, held []herald.Push) {
	if len(held) == 0 {
		fmt.Fprintln(w, "herald: no push was due or sending: none is held")
		return
	}
	fmt.Fprintf(w, "herald: %d push(es) held, each sent only once released (or cancelled) in the dashboard or with\n"+
		"  POST /admin/v1/pushes/{pushId}/release (or /cancel):\n", len(held))
	for _, p := range held {
		what := "sending since " + timeOr(p.StartedAt)
		if p.StartedAt == nil {
			what = "due " + timeOr(p.ScheduledAt)
		}
		fmt.Fprintf(w, "  %s  app %s  %s  %q\n", p.ID, p.AppID, what, p.Content.Title)
	}
}

func timeOr(t *time.Time) string {
	if t == nil {
		return "at once"
	}
	return t.UTC().Format(time.RFC3339)
}

// masterKeyFrom reads the master key of a restore: the file's, else
// HERALD_MASTER_KEY's; "" when neither is given.
func masterKeyFrom(file string, getenv func(string) string) (string, error) {
	if file == "" {
		return strings.TrimSpace(getenv("HERALD_MASTER_KEY")), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--master-key-file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}
