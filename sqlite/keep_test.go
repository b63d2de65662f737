package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"modernc.org/sqlite"
)

// keptOn returns the statements the pool's one connection keeps.
func keptOn(t *testing.T, db *sql.DB) map[string]*keptStmt {
	t.Helper()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var kept map[string]*keptStmt
	if err := c.Raw(func(dc any) error { kept = dc.(*keepingConn).kept; return nil }); err != nil {
		t.Fatal(err)
	}
	return kept
}

// openOneKept opens a keeping pool of one connection on a new database.
func openOneKept(t *testing.T) *sql.DB {
	t.Helper()
	db, err := openKeeping("file:" + pathEscape(filepath.Join(t.TempDir(), "k.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	return db
}

func TestKeepingConn(t *testing.T) {
	ctx := context.Background()
	db := openOneKept(t)
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b')`); err != nil {
		t.Fatal(err)
	}
	if n := len(keptOn(t, db)); n != 0 {
		t.Errorf("after a script: %d kept, want none (scripts are not kept)", n)
	}
	const ins = `INSERT INTO t (id, v) VALUES (?, ?)`
	for i := range 2 {
		if _, err := db.ExecContext(ctx, ins, 10+i, "z"); err != nil {
			t.Fatal(err)
		}
	}
	if kept := keptOn(t, db); len(kept) != 1 || kept[ins] == nil {
		t.Errorf("after two execs: kept %v, want the exec once", kept)
	}
	if _, err := db.ExecContext(ctx, `DELETE FROM t WHERE id >= 10`); err != nil {
		t.Fatal(err)
	}
	const q = `SELECT v FROM t WHERE id >= ? ORDER BY id`
	read := func(from int) []string {
		t.Helper()
		rows, err := db.QueryContext(ctx, q, from)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var v string
			rows.Scan(&v)
			out = append(out, v)
		}
		return out
	}
	for range 3 {
		if got := fmt.Sprint(read(1)); got != "[a b]" {
			t.Fatalf("got %s, want [a b]", got)
		}
	}
	if kept := keptOn(t, db); len(kept) != 3 || kept[q] == nil || kept[q].busy {
		t.Errorf("kept %v, want the query once, not busy (beside the two execs)", kept)
	}

	t.Run("PreparedIsLent", func(t *testing.T) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		st, err := tx.PrepareContext(ctx, ins)
		if err != nil {
			t.Fatal(err)
		}
		// The same text while the kept statement is lent: compiled afresh.
		if _, err := tx.ExecContext(ctx, ins, 20, "y"); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if _, err := st.ExecContext(ctx, 21+i, "y"); err != nil {
				t.Fatal(err)
			}
		}
		st.Close()
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM t WHERE v = 'y'`).Scan(&n); err != nil || n != 4 {
			t.Fatalf("rows written: %d, %v; want 4", n, err)
		}
	})
	if k := keptOn(t, db)[ins]; k == nil || k.busy {
		t.Errorf("after the prepared statement closed: kept %+v, want it kept and free", k)
	}

	t.Run("SameQueryWhileItsRowsAreOpen", func(t *testing.T) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		outer, err := tx.QueryContext(ctx, q, 1)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for outer.Next() {
			var v, inner string
			outer.Scan(&v)
			if err := tx.QueryRowContext(ctx, q, 2).Scan(&inner); err != nil {
				t.Fatal(err)
			}
			got = append(got, v+inner)
		}
		outer.Close()
		if fmt.Sprint(got) != "[ab bb]" {
			t.Errorf("got %v, want [ab bb]", got)
		}
	})

	t.Run("SchemaChanged", func(t *testing.T) {
		if _, err := db.ExecContext(ctx, `ALTER TABLE t ADD COLUMN w TEXT NOT NULL DEFAULT 'x'`); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(read(2)); got != "[b]" {
			t.Errorf("after ALTER: got %s, want [b]", got)
		}
	})

	t.Run("MoreQueriesThanKept", func(t *testing.T) {
		for i := range maxKeptPerConn + 10 {
			var n int
			if err := db.QueryRowContext(ctx, fmt.Sprintf(`SELECT %d + count(*) FROM t`, i)).Scan(&n); err != nil || n != i+2 {
				t.Fatalf("query %d: got (%d, %v), want %d", i, n, err, i+2)
			}
		}
		if n := len(keptOn(t, db)); n > maxKeptPerConn {
			t.Errorf("%d kept, want at most %d", n, maxKeptPerConn)
		}
		if got := fmt.Sprint(read(1)); got != "[a b]" {
			t.Errorf("got %s, want [a b]", got)
		}
	})
}

func TestCastLimits(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT v FROM t ORDER BY id LIMIT ?`, `SELECT v FROM t ORDER BY id LIMIT CAST(? AS INTEGER)`},
		{"SELECT v FROM t limit\n\t?3 OFFSET ?4", "SELECT v FROM t limit\n\tCAST(?3 AS INTEGER) OFFSET ?4"},
		{`SELECT v FROM t LIMIT @max_to_lock) RETURNING *`, `SELECT v FROM t LIMIT CAST(@max_to_lock AS INTEGER)) RETURNING *`},
		{`SELECT 1 LIMIT :n; SELECT 2 LIMIT $m`, `SELECT 1 LIMIT CAST(:n AS INTEGER); SELECT 2 LIMIT CAST($m AS INTEGER)`},
		{`SELECT v FROM t LIMIT?`, `SELECT v FROM t LIMIT CAST(? AS INTEGER)`},
		// Unchanged: a literal limit, an expression, and the word where it is not a LIMIT.
		{`SELECT v FROM t LIMIT 5`, `SELECT v FROM t LIMIT 5`},
		{`SELECT v FROM t LIMIT ? + 1`, `SELECT v FROM t LIMIT CAST(? AS INTEGER) + 1`},
		{`SELECT v FROM t LIMIT (?)`, `SELECT v FROM t LIMIT (?)`},
		{`SELECT 'LIMIT ?', "limit ?", [limit ?], ` + "`limit ?`" + ` FROM t`, `SELECT 'LIMIT ?', "limit ?", [limit ?], ` + "`limit ?`" + ` FROM t`},
		{`SELECT 'it''s LIMIT ?' -- LIMIT ?` + "\n" + `/* LIMIT ? */ FROM t`, `SELECT 'it''s LIMIT ?' -- LIMIT ?` + "\n" + `/* LIMIT ? */ FROM t`},
		{`SELECT nolimit ?, limits ? FROM t`, `SELECT nolimit ?, limits ? FROM t`},
		{`SELECT v FROM t LIMIT :`, `SELECT v FROM t LIMIT :`},
		{`SELECT 'open LIMIT ?`, `SELECT 'open LIMIT ?`},
	} {
		if got := castLimits(c.in); got != c.want {
			t.Errorf("castLimits(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestKeptBoundLimitCompiledOnce runs a kept query whose LIMIT is a
// parameter, with the limit changing, and holds SQLite's lookaside
// allocations (which compiling a statement makes by the hundred and a
// run of a compiled one hardly at all) to those of the same query with
// its limit written in: a statement SQLite compiled again at every run
// would make many times as many.
func TestKeptBoundLimitCompiledOnce(t *testing.T) {
	ctx := context.Background()
	db := openOneKept(t)
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (id INTEGER PRIMARY KEY, q TEXT, v TEXT); CREATE INDEX t_q ON t (q, id);
		INSERT INTO t (q, v) VALUES ('a', 'x'), ('a', 'y'), ('a', 'z'), ('b', 'w')`); err != nil {
		t.Fatal(err)
	}
	lookaside := func() int {
		t.Helper()
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var hits int
		if err := c.Raw(func(dc any) error {
			_, hits, err = dc.(*keepingConn).conn.(sqlite.DBStatus).Status(sqlite.DBStatusLookasideHit, false)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return hits
	}
	// runs runs query 50 times (boundQ with limits 1, 2, 3, 1, …; written
	// with its 3) and returns the lookaside allocations the runs made.
	const (
		written = `SELECT v FROM t WHERE q = 'a' ORDER BY id LIMIT 3`
		boundQ  = `SELECT v FROM t WHERE q = 'a' ORDER BY id LIMIT ?`
	)
	runs := func(query string) int {
		t.Helper()
		before := lookaside()
		for i := range 50 {
			limit, args := 3, []any(nil)
			if query == boundQ {
				limit = 1 + i%3
				args = []any{limit}
			}
			rows, err := db.QueryContext(ctx, query, args...)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for rows.Next() {
				n++
			}
			rows.Close()
			if n != limit {
				t.Fatalf("run %d of %q: %d rows, want %d", i, query, n, limit)
			}
		}
		return lookaside() - before
	}
	runs(written) // compiled, kept
	runs(boundQ)
	writtenN, bound := runs(written), runs(boundQ)
	if bound > 2*writtenN+50 {
		t.Errorf("50 runs of a kept query with LIMIT ?: %d lookaside allocations, against %d with the limit written in: compiled again at every run", bound, writtenN)
	}
	t.Logf("lookaside allocations over 50 runs: LIMIT ? %d, LIMIT 3 %d", bound, writtenN)
}
