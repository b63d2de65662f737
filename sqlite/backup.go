package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Backup copies the database at path into dst, a file that must not
// exist (it is created with mode 0600), while other processes (a serving herald) go on writing it: VACUUM
// INTO reads the whole database in one read transaction, so the copy is
// the database as it stood at one instant, and holds no WAL of its own. It
// waits out a writer's lock as the store does (busyTimeout); it writes
// nothing to path.
func Backup(ctx context.Context, path, dst string) error {
	if _, err := os.Stat(path); err != nil {
		return err
	}
	// dst is made here, empty (which VACUUM INTO takes) and 0600 from its
	// first byte: it holds what the store holds, and SQLite gives the
	// journal, WAL and shared-memory files it makes beside a database the
	// database file's mode, so they are 0600 too whatever the umask.
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s exists: a backup is written to a new file", dst)
	}
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return errors.Join(err, os.Remove(dst))
	}
	// Not query_only: SQLite counts VACUUM INTO as a write, though it
	// writes only dst.
	db, err := openKeeping("file:" + pathEscape(path) + fmt.Sprintf("?_pragma=busy_timeout(%d)", busyTimeout.Milliseconds()))
	if err != nil {
		return errors.Join(err, os.Remove(dst))
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dst); err != nil {
		return errors.Join(fmt.Errorf("copy %s into %s: %w", path, dst, err), os.Remove(dst))
	}
	return nil
}

// ErrDamaged is a database that SQLite's integrity check finds damaged.
var ErrDamaged = errors.New("sqlite: the database is damaged")

// Check runs SQLite's integrity check over the whole database: ErrDamaged
// with its first findings unless it answers ok.
func (db *DB) Check(ctx context.Context) error {
	rows, err := db.Reader.QueryContext(ctx, `PRAGMA integrity_check(10)`)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return fmt.Errorf("%w: %v", ErrDamaged, err)
		}
		found = append(found, s)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	if len(found) != 1 || found[0] != "ok" {
		return fmt.Errorf("%w: %s", ErrDamaged, strings.Join(found, "; "))
	}
	return nil
}

// ForgetLeader removes River's leader of a restored copy: the process the
// copy was taken from. Until its term ran out, no process started on the
// copy would lead, so none would move scheduled jobs (a retry chunk, a
// push due) to available. No process runs on a copy being restored.
func (db *DB) ForgetLeader(ctx context.Context) error {
	_, err := db.Writer.ExecContext(ctx, `DELETE FROM river_leader`)
	return err
}
