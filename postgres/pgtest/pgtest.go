// Package pgtest gives tests a PostgreSQL database of their own: a fresh
// schema of the database HERALD_TEST_DATABASE_URL names, dropped when the
// test ends. The role needs CREATE on that database, not CREATEDB.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the database the PostgreSQL tests run against.
const EnvURL = "HERALD_TEST_DATABASE_URL"

// BaseURL returns the test database's URL, or skips t with a message that
// names the variable.
func BaseURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		t.Skip(EnvURL + " is not set: this PostgreSQL test did not run")
	}
	return u
}

// NewSchema creates an empty schema in the database at base, dropped when
// t ends, and returns the URL of connections using it (with params added,
// e.g. pool_max_conns).
func NewSchema(t testing.TB, base string, params map[string]string) string {
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
	all := map[string]string{"search_path": schema}
	for k, v := range params {
		all[k] = v
	}
	return WithParams(t, base, all)
}

func dropSchema(t testing.TB, base, schema string) {
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

// WithParams adds connection parameters to a URL (postgres://…) or a
// key=value connection string.
func WithParams(t testing.TB, base string, params map[string]string) string {
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
