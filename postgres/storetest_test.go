package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/heraldpush/herald/postgres"
	"github.com/heraldpush/herald/postgres/pgtest"
	"github.com/heraldpush/herald/storetest"
)

// TestStore runs the conformance suite against the PostgreSQL store, each
// subtest in a fresh schema of the test database.
func TestStore(t *testing.T) {
	base := databaseURL(t)
	t.Parallel()
	storetest.Run(t, func(t *testing.T) storetest.Harness { return openHarness(t, base) })
}

// databaseURL returns the test database's URL, or skips t.
func databaseURL(t *testing.T) string { return pgtest.BaseURL(t) }

// openHarness opens a migrated store in a new schema of the database at
// base (dropped when t ends), on a pool of four connections, with a
// settable clock and an insert-only River client on the same schema.
func openHarness(t *testing.T, base string) storetest.Harness {
	t.Helper()
	db := openSchema(t, base)
	q, err := river.NewClient(riverpgxv5.New(db.Pool), &river.Config{Schema: db.Schema()})
	if err != nil {
		t.Fatal(err)
	}
	db.Queue = q
	clock := &storetest.Clock{}
	db.Now = clock.Now
	return storetest.Harness{
		Store:  db,
		SetNow: clock.Set,
		Jobs: func(ctx context.Context, kind string) ([]string, error) {
			rows, err := db.Pool.Query(ctx, `SELECT state FROM river_job WHERE kind = $1 ORDER BY id`, kind)
			if err != nil {
				return nil, err
			}
			return pgx.CollectRows(rows, pgx.RowTo[string])
		},
		Exec: func(ctx context.Context, query string) error {
			_, err := db.Pool.Exec(ctx, query)
			return err
		},
		Together: postgres.Together(t, db),
	}
}

// openSchema creates a schema of its own for t in the database at base and
// returns a migrated store whose connections use it.
func openSchema(t *testing.T, base string) *postgres.DB {
	t.Helper()
	db := open(t, newSchema(t, base))
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}

// newSchema creates a schema of its own for t (see pgtest) and returns
// the URL of a pool of four connections on it.
func newSchema(t *testing.T, base string) string {
	return pgtest.NewSchema(t, base, map[string]string{"pool_max_conns": "4"})
}

// open opens the store at url, closed when t ends.
func open(t *testing.T, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// withParams adds connection parameters to a URL (see pgtest).
func withParams(t *testing.T, base string, params map[string]string) string {
	return pgtest.WithParams(t, base, params)
}
