package postgres

import (
	"context"
	"testing"
)

// TestEmailKeyMigration: migration 34 recomputes email_key with ASCII
// letters lowered alone (identity.EmailKey), not PostgreSQL's Unicode
// lower(): a key written with the Kelvin sign as k no longer matches
// kate@example.com.
func TestEmailKeyMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p := migratedTo(t, 33)
	if _, err := db.Pool.Exec(ctx, `INSERT INTO operators (id, email, email_key, name, role, created_at) VALUES
		('op_a', 'Mina@Example.COM', 'mina@example.com', 'M', 'admin', 1),
		('op_k', $1, 'kate@example.com', 'K', 'admin', 1)`, "\u212Aate@Example.com"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 34); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"op_a": "mina@example.com", "op_k": "\u212Aate@example.com"} {
		var got string
		if err := db.Pool.QueryRow(ctx, `SELECT email_key FROM operators WHERE id = $1`, id).Scan(&got); err != nil || got != want {
			t.Errorf("%s: email_key %q (%v), want %q", id, got, err, want)
		}
	}
}
