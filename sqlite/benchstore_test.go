package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sqlite"
)

// benchNow is the benchmarks' clock.
var benchNow = time.Date(2025, 6, 11, 22, 4, 30, 0, time.UTC)

// benchStore returns a migrated store in the benchmark's temporary
// directory with one registered app; withQueue gives it a River client
// (for the writes that queue jobs).
func benchStore(b *testing.B, withQueue bool) (*sqlite.DB, herald.App) {
	b.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "herald.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	if withQueue {
		q, err := river.NewClient(riversqlite.New(db.Writer), &river.Config{})
		if err != nil {
			b.Fatal(err)
		}
		db.Queue = q
	}
	app := herald.App{ID: herald.NewID("app_", benchNow), Name: "a", APIKey: herald.NewAPIKey(), SecretHash: herald.HashSecret("s"),
		Tier: herald.TierFree, Registered: true, TimeZone: herald.DefaultTimeZone, CreatedAt: benchNow}
	if err := db.CreateApp(ctx, app); err != nil {
		b.Fatal(err)
	}
	return db, app
}
