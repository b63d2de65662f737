package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/postgres/pgtest"
	"github.com/heraldpush/herald/sqlstore"
)

// TestTranslateUnavailable holds the one place driver errors become the
// store's to DESIGN.md section 4: a database that cannot be reached, did
// not answer in time, is shutting down, full or read-only is
// herald.ErrUnavailable (503); a statement's own failure is not.
func TestTranslateUnavailable(t *testing.T) {
	t.Parallel()
	// A real connection refused: a port nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, refused := pgx.Connect(ctx, "postgres://u:p@"+addr+"/db?connect_timeout=2")
	if refused == nil {
		t.Fatal("connect to a closed port: got no error")
	}
	tests := []struct {
		name        string
		err         error
		unavailable bool
	}{
		{"ConnectRefused", refused, true},
		{"ConnectionLost", fmt.Errorf("failed to receive message: %w", io.ErrUnexpectedEOF), true},
		{"Deadline", fmt.Errorf("timeout: %w", context.DeadlineExceeded), true},
		{"ReadOnly", &pgconn.PgError{Code: "25006"}, true},
		{"DiskFull", &pgconn.PgError{Code: "53100"}, true},
		{"TooManyConnections", &pgconn.PgError{Code: "53300"}, true},
		{"AdminShutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"StatementTimeout", &pgconn.PgError{Code: "57014"}, true},
		{"ConnectionFailure", &pgconn.PgError{Code: "08006"}, true},
		{"SyntaxError", &pgconn.PgError{Code: "42601"}, false},
		{"CheckViolation", &pgconn.PgError{Code: "23514"}, false},
		{"ClientGone", context.Canceled, false},
	}
	for _, tt := range tests {
		got := (engine{}).Translate(tt.err)
		if errors.Is(got, herald.ErrUnavailable) != tt.unavailable {
			t.Errorf("%s: Translate(%v) = %v, want unavailable %v", tt.name, tt.err, got, tt.unavailable)
		}
	}
	if got := (engine{}).Translate(pgx.ErrNoRows); !errors.Is(got, herald.ErrNotFound) {
		t.Errorf("no rows: got %v, want ErrNotFound", got)
	}
}

// TestTranslateDeadlock: a statement PostgreSQL failed to break a
// deadlock, or a serialization failure, is sqlstore.ErrDeadlock (its
// transaction runs again); other errors are not.
func TestTranslateDeadlock(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]bool{"40P01": true, "40001": true, "23505": false, "42601": false} {
		got := (engine{}).Translate(&pgconn.PgError{Code: code})
		if errors.Is(got, sqlstore.ErrDeadlock) != want {
			t.Errorf("Translate(SQLSTATE %s) = %v, want ErrDeadlock %v", code, got, want)
		}
	}
}

// TestForUpdateLocksWithoutARowVersion: the row lock the store takes
// where it once wrote an update that changed nothing (sqlstore.RowLocker)
// holds the push's row against another writer until the commit, lets an
// insert that references the row (a chunk's foreign key) through, and
// leaves the row's version as it was: no new tuple, no WAL of one.
func TestForUpdateLocksWithoutARowVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := withApps(t, pgtest.BaseURL(t), 1)
	if _, err := db.Pool.Exec(ctx, `INSERT INTO pushes (id, app_id, kind, status, marketing, is_marketing_opt, requested_users,
		server_actions_half, created_at) VALUES ('p', 'app_00', 'users', 'sending', FALSE, FALSE, 1, 0, 1)`); err != nil {
		t.Fatal(err)
	}
	version := func() string {
		var v string
		if err := db.Pool.QueryRow(ctx, `SELECT xmin::text || ctid::text FROM pushes WHERE id = 'p'`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := version()
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM pushes WHERE id = 'p'`+engine{}.ForUpdate()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO push_chunks (push_id, chunk, size) VALUES ('p', 0, 0)`); err != nil {
		t.Errorf("an insert referencing the locked row: %v", err)
	}
	updated := make(chan error, 1)
	go func() {
		_, err := db.Pool.Exec(ctx, `UPDATE pushes SET open_chunks = 1 WHERE id = 'p'`)
		updated <- err
	}()
	select {
	case err := <-updated:
		t.Fatalf("another writer's update went through the lock (%v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	if got := version(); got != before {
		t.Errorf("the lock wrote a row version: %s, was %s", got, before)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-updated; err != nil {
		t.Errorf("the update after the commit: %v", err)
	}
}
