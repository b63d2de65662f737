package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/heraldpush/herald/postgres"
	"github.com/heraldpush/herald/storetest"
)

// testDatabaseURL names the PostgreSQL database the tests of this package
// run against; without it they skip.
const testDatabaseURL = "HERALD_TEST_DATABASE_URL"

// TestStore runs the conformance suite against the PostgreSQL store, each
// subtest in a fresh schema of the test database.
func TestStore(t *testing.T) {
	base := databaseURL(t)
	t.Parallel()
	storetest.Run(t, func(t *testing.T) storetest.Harness { return openHarness(t, base) })
}

// databaseURL returns the test database's URL, or skips t.
func databaseURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv(testDatabaseURL)
	if u == "" {
		t.Skip(testDatabaseURL + " is not set: the PostgreSQL store's tests did not run")
	}
	return u
}

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
	clock := &clock{}
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

// newSchema creates an empty schema in the database at base, dropped when t
// ends, and returns the URL of a pool of four connections on it. The role
// needs only CREATE on the database, not CREATEDB.
func newSchema(t *testing.T, base string) string {
	t.Helper()
	ctx := context.Background()
	suffix := make([]byte, 6)
	rand.Read(suffix)
	schema := "herald_test_" + hex.EncodeToString(suffix)
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropSchema(t, base, schema) })
	return withParams(t, base, map[string]string{"search_path": schema, "pool_max_conns": "4"})
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

func dropSchema(t *testing.T, base, schema string) {
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Errorf("drop schema %s: %v", schema, err)
		return
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
		t.Errorf("drop schema %s: %v", schema, err)
	}
}

// withParams adds connection parameters to a URL (postgres://…) or a
// key=value connection string.
func withParams(t *testing.T, base string, params map[string]string) string {
	t.Helper()
	if !strings.HasPrefix(base, "postgres://") && !strings.HasPrefix(base, "postgresql://") {
		for k, v := range params {
			base += " " + k + "=" + v
		}
		return base
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	for k, v := range params {
		q.Set(k, v)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// clock is a settable clock that concurrent readers may read.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}
