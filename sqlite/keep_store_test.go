package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

// TestStatementsKept: the store's statements, its writes among them, are
// compiled once on the writer's connection and kept, and used again on
// later runs.
func TestStatementsKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	app := herald.App{ID: "app_1", Name: "a", APIKey: herald.NewAPIKey(), SecretHash: herald.HashSecret("s"), Tier: herald.TierFree,
		TimeZone:  herald.DefaultTimeZone,
		CreatedAt: time.Now()}
	if err := db.CreateApp(ctx, app); err != nil {
		t.Fatal(err)
	}
	register := func(device string) {
		t.Helper()
		user := "u-" + device
		reg := herald.DeviceRegistration{DeviceID: device, Token: "t-" + device, Platform: herald.PlatformAndroid,
			AppSourceVersion: "1.0.0", UserID: &user}
		if _, err := db.RegisterDevice(ctx, app.ID, reg); err != nil {
			t.Fatal(err)
		}
		if _, err := db.AppByAPIKey(ctx, app.APIKey); err != nil {
			t.Fatal(err)
		}
	}
	register("d1")
	register("d2")
	kept := keptOn(t, db.Writer)
	writes := 0
	for q := range kept {
		if strings.HasPrefix(strings.TrimSpace(q), "INSERT") || strings.HasPrefix(strings.TrimSpace(q), "UPDATE") {
			writes++
		}
	}
	if writes == 0 {
		t.Fatalf("kept on the writer after two registrations: %d statements, no INSERT or UPDATE", len(kept))
	}
	stmts := map[*keptStmt]bool{}
	for _, k := range kept {
		stmts[k] = true
	}
	register("d3")
	again := keptOn(t, db.Writer)
	if len(again) != len(kept) {
		t.Errorf("kept after a third: %d statements, want %d (none prepared anew)", len(again), len(kept))
	}
	for q, k := range again {
		if !stmts[k] {
			t.Errorf("kept after a third: %q compiled anew", q)
		}
	}
}
