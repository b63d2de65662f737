package postgres_test

import (
	"context"
	"database/sql"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heraldpush/herald/postgres/pgtest"
	"github.com/heraldpush/herald/sqlite"
	"github.com/heraldpush/herald/sqlstore"
)

// column is what both engines can say of a column: its nullability, when
// the engine reports it (SQLite does not for primary-key columns: PRAGMA
// table_info says nullable for an INTEGER PRIMARY KEY that cannot be).
type column struct {
	notNull, known bool
}

// schema is a migrated database's tables and, per table, its columns.
type schema map[string]map[string]column

// TestMigratedSchemasMatch migrates both engines and compares what they
// made: the same tables, each with the same column names, and the same
// nullability wherever both report it (types differ by dialect), at the
// same schema version. The
// SQLite half always runs; the PostgreSQL half needs
// HERALD_TEST_DATABASE_URL and is skipped, with that reason, without it.
func TestMigratedSchemasMatch(t *testing.T) {
	lite, liteVersion := sqliteSchema(t)
	for _, table := range []string{"apps", "users", "devices", "pushes"} {
		if len(lite[table]) == 0 {
			t.Fatalf("SQLite after migrating: no table %s (tables: %v)", table, tableNames(lite))
		}
	}
	db := openSchema(t, pgtest.BaseURL(t))
	pg := postgresSchema(t, db.SQL())
	pgVersion, err := db.SchemaVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if pgVersion != liteVersion {
		t.Errorf("schema version: PostgreSQL %+v, SQLite %+v", pgVersion, liteVersion)
	}
	if got, want := tableNames(pg), tableNames(lite); !slices.Equal(got, want) {
		t.Fatalf("tables differ:\nPostgreSQL %v\nSQLite     %v", got, want)
	}
	for _, table := range tableNames(lite) {
		if got, want := columnNames(pg[table]), columnNames(lite[table]); !slices.Equal(got, want) {
			t.Errorf("table %s: columns differ:\nPostgreSQL %v\nSQLite     %v", table, got, want)
			continue
		}
		for name, l := range lite[table] {
			if p := pg[table][name]; l.known && p.notNull != l.notNull {
				t.Errorf("%s.%s: NOT NULL on PostgreSQL %t, on SQLite %t", table, name, p.notNull, l.notNull)
			}
		}
	}
}

// TestIndexedTextComparesBytewise checks that every text column of
// Herald's indexes compares byte-wise (COLLATE "C", see migration 1), as
// SQLite's do: under the database's collation (a libc locale's) its
// order could differ from SQLite's, and each comparison of a key costs a
// call into the locale instead of a memcmp.
func TestIndexedTextComparesBytewise(t *testing.T) {
	db := openSchema(t, pgtest.BaseURL(t))
	got := queryStrings(t, db.SQL(), `SELECT DISTINCT c.relname || '.' || a.attname
		FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY (i.indkey)
		LEFT JOIN pg_collation co ON co.oid = a.attcollation
		WHERE c.relnamespace = current_schema()::regnamespace AND a.atttypid = 'text'::regtype
		  AND c.relname NOT LIKE 'river%' AND c.relname <> 'goose_db_version'
		  AND co.collname IS DISTINCT FROM 'C'
		ORDER BY 1`)
	if len(got) > 0 {
		t.Errorf("indexed text columns not COLLATE \"C\": %v", got)
	}
}

// ignoredTable is a table one engine keeps for itself: SQLite's own and
// goose's version table (its columns differ by dialect by design).
func ignoredTable(name string) bool {
	return strings.HasPrefix(name, "sqlite_") || name == "goose_db_version"
}

// sqliteSchema migrates a new SQLite store and reads its schema and
// schema version.
func sqliteSchema(t *testing.T) (schema, sqlstore.SchemaVersion) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	version, err := db.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if version.Database != version.Binary {
		t.Fatalf("SQLite after migrating: schema version %+v, want the binary's", version)
	}
	tables := queryStrings(t, db.Reader, `SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name`)
	s := schema{}
	for _, table := range tables {
		if ignoredTable(table) {
			continue
		}
		s[table] = map[string]column{}
		rows, err := db.Reader.QueryContext(ctx, `SELECT name, "notnull", pk FROM pragma_table_info(?)`, table)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var name string
			var notNull bool
			var pk int
			if err := rows.Scan(&name, &notNull, &pk); err != nil {
				t.Fatal(err)
			}
			s[table][name] = column{notNull: notNull, known: pk == 0}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return s, version
}

// postgresSchema reads the schema of the connection's search path.
func postgresSchema(t *testing.T, db *sql.DB) schema {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT c.table_name, c.column_name, c.is_nullable = 'NO'
		FROM information_schema.columns c JOIN information_schema.tables t
		  ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	s := schema{}
	for rows.Next() {
		var table, name string
		var notNull bool
		if err := rows.Scan(&table, &name, &notNull); err != nil {
			t.Fatal(err)
		}
		if ignoredTable(table) {
			continue
		}
		if s[table] == nil {
			s[table] = map[string]column{}
		}
		s[table][name] = column{notNull: notNull, known: true}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

// queryStrings runs a query of one text column.
func queryStrings(t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// tableNames lists a schema's tables in order.
func tableNames(s schema) []string { return slices.Sorted(maps.Keys(s)) }

// columnNames lists a table's columns in order.
func columnNames(cols map[string]column) []string { return slices.Sorted(maps.Keys(cols)) }
