package postgres

import "testing"

func TestRebind(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`WHERE a = ? AND b = ?`, `WHERE a = $1 AND b = $2`},
		{`VALUES (?,?,?,?,?,?,?,?,?,?,?)`, `VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`},
		{`SET d = ?1, t = ?2 WHERE d = ?1 AND (?12 IS NULL OR u = ?12)`, `SET d = $1, t = $2 WHERE d = $1 AND ($12 IS NULL OR u = $12)`},
		{`WHERE s = 'what?' AND t = ?`, `WHERE s = 'what?' AND t = $1`},
		{`WHERE s = 'it''s ?' AND t = ?`, `WHERE s = 'it''s ?' AND t = $1`},
		{`SELECT "odd?name" FROM t WHERE x = ?`, `SELECT "odd?name" FROM t WHERE x = $1`},
		{"SELECT 1 -- why?\nWHERE x = ?", "SELECT 1 -- why?\nWHERE x = $1"},
		{`SELECT /* ? */ ? FROM t`, `SELECT /* ? */ $1 FROM t`},
		{`WHERE s = 'unterminated ?`, `WHERE s = 'unterminated ?`},
	} {
		if got := rebind(tc.in); got != tc.want {
			t.Errorf("rebind(%q): got %q, want %q", tc.in, got, tc.want)
		}
	}
}
