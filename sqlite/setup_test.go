package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sqlite"
)

// setup opens a migrated database in t's temporary directory with a fixed
// clock and one app.
func setup(t *testing.T) (*sqlite.DB, herald.App) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 6, 11, 22, 4, 30, 0, time.UTC)
	db.Now = func() time.Time { return now }
	return db, createApp(t, db, now)
}

func createApp(t *testing.T, db *sqlite.DB, now time.Time) herald.App {
	t.Helper()
	a := herald.App{ID: herald.NewID("app_", now), Name: "a", APIKey: herald.NewAPIKey(), SecretHash: herald.HashSecret("s"),
		Tier: herald.TierBusiness, AppUserEnabled: true, Registered: true, TimeZone: herald.DefaultTimeZone, CreatedAt: now}
	if err := db.CreateApp(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	return a
}

func register(t *testing.T, db *sqlite.DB, appID, device, token string, user *string) herald.Device {
	t.Helper()
	d, err := db.RegisterDevice(context.Background(), appID, herald.DeviceRegistration{
		DeviceID: device, Token: token, Platform: herald.PlatformIOS, AppSourceVersion: "1.6.0", UserID: user})
	if err != nil {
		t.Fatalf("register %s: %v", device, err)
	}
	return d
}
