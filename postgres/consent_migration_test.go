package postgres

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestConsentClockBackfill: migration 13 (a Go migration, rebound to
// PostgreSQL's placeholders) gives consent stored before the consent trail
// a clock from the user's (device's) registration, due two calendar years
// later on the app's calendar (29 February in Seoul: 1 March, the same
// local time); users without marketing consent and clocks already set are
// left alone.
func TestConsentClockBackfill(t *testing.T) {
	t.Parallel()
	seoul, err := time.LoadLocation("Asia/Seoul")
	if err != nil {
		t.Skip("no time zone data")
	}
	ctx := context.Background()
	db, p := migratedTo(t, 12)
	created := time.Date(2024, 2, 29, 10, 0, 0, 0, seoul).UnixMilli()
	for _, q := range []string{
		`INSERT INTO apps (id, name, api_key, secret_hash, tier, time_zone, created_at) VALUES ('a', 'a', 'k', '\x00', 'free', 'Asia/Seoul', 1)`,
		`INSERT INTO users (app_id, user_id, state, marketing, created_at) VALUES ('a', 'own', 'registered', TRUE, $1)`,
		`INSERT INTO users (app_id, user_id, state, marketing, created_at) VALUES ('a', 'device', 'registered', FALSE, $1)`,
		`INSERT INTO users (app_id, user_id, state, marketing, created_at) VALUES ('a', 'none', 'registered', FALSE, $1)`,
		`INSERT INTO users (app_id, user_id, state, marketing, created_at, consent_confirmed_at, consent_due_at) VALUES ('a', 'set', 'registered', TRUE, $1, 1750000000000, 1813000000000)`,
		`INSERT INTO devices (app_id, device_id, token, platform, app_source_version, user_id, marketing, marketing_night, created_at, token_updated_at)
			VALUES ('a', 'd1', 't1', 'android', '1.6.0', 'device', TRUE, FALSE, $1, 1)`,
	} {
		var args []any
		if strings.Contains(q, "$1") {
			args = append(args, created)
		}
		if _, err := db.Pool.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := p.UpTo(ctx, 13); err != nil {
		t.Fatal(err)
	}
	due := time.Date(2026, 3, 1, 10, 0, 0, 0, seoul).UnixMilli()
	for user, want := range map[string][2]*int64{
		"own":    {&created, &due},
		"device": {&created, &due},
		"none":   {nil, nil},
		"set":    {ptr(int64(1_750_000_000_000)), ptr(int64(1_813_000_000_000))},
	} {
		var got [2]*int64
		if err := db.Pool.QueryRow(ctx, `SELECT consent_confirmed_at, consent_due_at FROM users WHERE user_id = $1`, user).
			Scan(&got[0], &got[1]); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if (got[i] == nil) != (want[i] == nil) || got[i] != nil && *got[i] != *want[i] {
				t.Errorf("%s: clock %d: got %v, want %v", user, i, deref(got[i]), deref(want[i]))
			}
		}
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
