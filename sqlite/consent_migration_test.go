package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// TestConsentClockBackfill: migration 13 gives consent stored before the
// consent trail a clock from the user's (device's) registration, due 730
// days later; users without marketing consent, withdrawn users and clocks
// already set are left alone.
func TestConsentClockBackfill(t *testing.T) {
	t.Parallel()
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
	const created, confirmed = int64(1_700_000_000_000), int64(1_750_000_000_000)
	for _, q := range []string{
		`INSERT INTO apps (id, name, api_key, secret_hash, tier, time_zone, created_at) VALUES ('a', 'a', 'k', x'00', 'free', 'Asia/Seoul', 1)`,
		`INSERT INTO users (app_id, user_id, state, marketing, created_at) VALUES ('a', 'own', 'registered', 1, 1700000000000)`,
		`INSERT INTO users (app_id, user_id, state, marketing, created_at) VALUES ('a', 'device', 'registered', 0, 1700000000000)`,
		`INSERT INTO users (app_id, user_id, state, marketing, created_at) VALUES ('a', 'none', 'registered', 0, 1700000000000)`,
		`INSERT INTO users (app_id, user_id, state, marketing, created_at, withdrawn_at) VALUES ('a', 'gone', 'withdrawn', 0, 1700000000000, 1)`,
		`INSERT INTO users (app_id, user_id, state, marketing, created_at, consent_confirmed_at, consent_due_at) VALUES ('a', 'set', 'registered', 1, 1700000000000, 1750000000000, 1813000000000)`,
		`INSERT INTO devices (app_id, device_id, token, platform, app_source_version, user_id, marketing, marketing_night, created_at, token_updated_at)
			VALUES ('a', 'd1', 't1', 'android', '1.6.0', 'device', 1, 0, 1700000000000, 1)`,
	} {
		if _, err := db.Writer.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	const twoYears = 730 * 24 * 3600 * 1000
	for user, want := range map[string][2]sql.NullInt64{
		"own":    {{Int64: created, Valid: true}, {Int64: created + twoYears, Valid: true}},
		"device": {{Int64: created, Valid: true}, {Int64: created + twoYears, Valid: true}},
		"none":   {},
		"gone":   {},
		"set":    {{Int64: confirmed, Valid: true}, {Int64: 1_813_000_000_000, Valid: true}},
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
}
