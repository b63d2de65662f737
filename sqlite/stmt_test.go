package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

// TestStatementsKept: the store's statements are prepared once and kept,
// for reads and in write transactions, and used again on later runs.
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
	reads, writes := len(db.readStmts.m), len(db.writeStmts.m)
	if reads == 0 || writes == 0 {
		t.Fatalf("kept after two registrations: got %d reads and %d writes, want some of each", reads, writes)
	}
	register("d3")
	if r, w := len(db.readStmts.m), len(db.writeStmts.m); r != reads || w != writes {
		t.Errorf("kept after a third: got %d reads and %d writes, want %d and %d (none prepared anew)", r, w, reads, writes)
	}
}
