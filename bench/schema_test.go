package bench

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestSchema(t *testing.T) {
	base := os.Getenv("HERALD_TEST_DATABASE_URL")
	if base == "" {
		t.Skip("HERALD_TEST_DATABASE_URL not set: no PostgreSQL to make a schema in")
	}
	ctx := context.Background()
	u, drop, err := Schema(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	schema := SchemaOf(u)
	if !strings.HasPrefix(schema, "herald_bench_") {
		t.Fatalf("SchemaOf(%q) = %q, want herald_bench_…", u, schema)
	}
	if got := schemaCount(t, base, schema); got != 1 {
		t.Fatalf("schema %s: %d after Schema, want 1", schema, got)
	}
	if err := drop(); err != nil {
		t.Fatal(err)
	}
	if got := schemaCount(t, base, schema); got != 0 {
		t.Fatalf("schema %s: %d after drop, want 0", schema, got)
	}
}

func TestSchemaOf(t *testing.T) {
	if got := SchemaOf("postgres://h@127.0.0.1/db?search_path=s1&sslmode=disable"); got != "s1" {
		t.Fatalf("SchemaOf = %q, want s1", got)
	}
	if got := SchemaOf("postgres://h@127.0.0.1/db"); got != "" {
		t.Fatalf("SchemaOf without search_path = %q, want empty", got)
	}
}

// schemaCount counts the schemas named schema in the database at dbURL.
func schemaCount(t *testing.T, dbURL, schema string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1`, schema).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
