package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

// TestConsentClockBackfill: migration 13 (a Go migration) gives consent
// stored before the consent trail a clock from the user's (device's)
// registration, due when herald.ConsentDueAt says on the app's calendar
// (registered on 29 February in Seoul: due on 1 March two years later, at
// the same local time); users without marketing consent, withdrawn users
// and clocks already set are left alone.
func TestConsentClockBackfill(t *testing.T) {
	t.Parallel()
	seoul, err := time.LoadLocation("Asia/Seoul")
	if err != nil {
		t.Skip("no time zone data")
	}
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	p, err := db.goose(db.Writer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 12); err != nil {
		t.Fatal(err)
	}
	created := time.Date(2024, 2, 29, 10, 0, 0, 0, seoul).UnixMilli()
	const confirmed, setDue = int64(1_750_000_000_000), int64(1_813_000_000_000)
	for _, q := range []string{
		`INSERT INTO apps (id, name, api_key, secret_hash, tier, time_zone, created_at) VALUES ('a', 'a', 'k', x'00', 'free', 'Asia/Seoul', 1)`,
		`INSERT INTO users (app_id, user_id, state, marketing, created_at) VALUES ('a', 'own', 'registered', 1, ?1)`,
		`INSERT INTO users (app_id, user_id, state, marketing, created_at) VALUES ('a', 'device', 'registered', 0, ?1)`,
		`INSERT INTO users (app_id, user_id, state, marketing, created_at) VALUES ('a', 'none', 'registered', 0, ?1)`,
		`INSERT INTO users (app_id, user_id, state, marketing, created_at, withdrawn_at) VALUES ('a', 'gone', 'withdrawn', 0, ?1, 1)`,
		`INSERT INTO users (app_id, user_id, state, marketing, created_at, consent_confirmed_at, consent_due_at) VALUES ('a', 'set', 'registered', 1, ?1, 1750000000000, 1813000000000)`,
		`INSERT INTO devices (app_id, device_id, token, platform, app_source_version, user_id, marketing, marketing_night, created_at, token_updated_at)
			VALUES ('a', 'd1', 't1', 'android', '1.6.0', 'device', 1, 0, ?1, 1)`,
	} {
		if _, err := db.Writer.ExecContext(ctx, q, created); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := p.UpTo(ctx, 13); err != nil {
		t.Fatal(err)
	}
	due := time.Date(2026, 3, 1, 10, 0, 0, 0, seoul).UnixMilli()
	if got := herald.ConsentDueAt(time.UnixMilli(created), seoul).UnixMilli(); got != due {
		t.Fatalf("ConsentDueAt: got %d, want %d", got, due)
	}
	for user, want := range map[string][2]sql.NullInt64{
		"own":    {{Int64: created, Valid: true}, {Int64: due, Valid: true}},
		"device": {{Int64: created, Valid: true}, {Int64: due, Valid: true}},
		"none":   {},
		"gone":   {},
		"set":    {{Int64: confirmed, Valid: true}, {Int64: setDue, Valid: true}},
	} {
		var got [2]sql.NullInt64
		if err := db.Reader.QueryRowContext(ctx, `SELECT consent_confirmed_at, consent_due_at FROM users WHERE user_id = ?`, user).
			Scan(&got[0], &got[1]); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: got clock %v, want %v", user, got, want)
		}
	}
	var dev sql.NullInt64
	if err := db.Reader.QueryRowContext(ctx, `SELECT consent_confirmed_at FROM devices WHERE device_id = 'd1'`).Scan(&dev); err != nil || dev.Int64 != created {
		t.Errorf("device clock: got %v, %v, want %d", dev, err, created)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
}
