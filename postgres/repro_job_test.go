package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/postgres"
)

// reproJob is a job of the kind named, for the reproductions' pushes
// (never run).
type reproJob struct{ kind string }

func (j reproJob) Kind() string { return j.kind }

// reproSchema opens a fresh schema with an insert-only River client and
// one app, as the reproductions start.
func reproSchema(t *testing.T) (*postgres.DB, herald.App) {
	t.Helper()
	db := openSchema(t, databaseURL(t))
	q, err := river.NewClient(riverpgxv5.New(db.Pool), &river.Config{Schema: db.Schema()})
	if err != nil {
		t.Fatal(err)
	}
	db.Queue = q
	now := time.Now()
	app := herald.App{ID: herald.NewID("app_", now), Name: "a", APIKey: herald.NewAPIKey(), SecretHash: herald.HashSecret("s"),
		Tier: herald.TierBusiness, AppUserEnabled: true, Registered: true, TimeZone: herald.DefaultTimeZone, CreatedAt: now.Truncate(time.Millisecond)}
	if err := db.CreateApp(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	return db, app
}
