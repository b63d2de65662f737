package postgres

import (
	"context"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/heraldpush/herald/postgres/pgtest"
)

// TestUserUpdatedAtBackfill: migration 22 gives each user the latest of its
// registration, its withdrawal and its last consent record.
func TestUserUpdatedAtBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p := migratedTo(t, 17)
	for _, q := range []string{
		`INSERT INTO apps (id, name, api_key, secret_hash, tier, time_zone, created_at) VALUES ('a', 'a', 'k', '\x00', 'free', 'Asia/Seoul', 1)`,
		`INSERT INTO users (app_id, user_id, state, created_at) VALUES ('a', 'new', 'registered', 1000)`,
		`INSERT INTO users (app_id, user_id, state, created_at, withdrawn_at) VALUES ('a', 'gone', 'withdrawn', 1000, 3000)`,
		`INSERT INTO users (app_id, user_id, state, created_at, consent_seq) VALUES ('a', 'changed', 'registered', 1000, 2)`,
		`INSERT INTO consent_changes (app_id, user_id, seq, at, source, marketing_from, marketing_to, night_from, night_to, event)
			VALUES ('a', 'changed', 1, 2000, 'sdk', FALSE, TRUE, FALSE, FALSE, 'none'), ('a', 'changed', 2, 5000, 'sdk', TRUE, TRUE, FALSE, FALSE, 'none')`,
	} {
		if _, err := db.Pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := p.UpTo(ctx, 22); err != nil {
		t.Fatal(err)
	}
	for user, want := range map[string]int64{"new": 1000, "gone": 3000, "changed": 5000} {
		var got int64
		if err := db.Pool.QueryRow(ctx, `SELECT updated_at FROM users WHERE user_id = $1`, user).Scan(&got); err != nil || got != want {
			t.Errorf("%s: got updated_at %d (%v), want %d", user, got, err, want)
		}
	}
}

// migratedTo opens a fresh schema migrated up to version, and the
// migrations' provider to go on with (p.UpTo).
func migratedTo(t *testing.T, version int64) (*DB, *goose.Provider) {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, pgtest.NewSchema(t, pgtest.BaseURL(t), nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	p, err := db.goose(false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, version); err != nil {
		t.Fatal(err)
	}
	return db, p
}
