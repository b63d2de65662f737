package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"

	"modernc.org/sqlite"
)

// maxKeptPerConn bounds the statements a connection keeps: River's and
// the store's (a bounded set: IN lists come in a few padded lengths), so
// the bound is only a guard; past it, one kept statement is dropped for
// each new one.
const maxKeptPerConn = 512

// openKeeping opens a pool whose connections keep the queries they are
// sent as text. database/sql hands a query that comes as text (not a
// *sql.Stmt) to the driver, which compiles it at every call: River's
// queries come so (its insert, fetch and completion of every job), and
// compiling them cost as much as running them. The store's own statements
// come so too, and its prepared ones (ExecMany) are lent the kept
// statement: one cache for all. Scripts of several statements (migrations,
// run once) are not kept.
func openKeeping(dsn string) (*sql.DB, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(keepingConnector{c}), nil
}

type keepingConnector struct{ driver.Connector }

func (k keepingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := k.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &keepingConn{conn: c.(sqliteConn), kept: map[string]*keptStmt{}}, nil
}

// sqliteConn is what the driver's connections do that database/sql asks
// of them.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// keepingConn is one connection and the statements it keeps, by query. A
// connection is used by one goroutine at a time (database/sql's rule), so
// the map needs no lock.
type keepingConn struct {
	conn sqliteConn
	kept map[string]*keptStmt
}

// keptStmt is a kept statement; busy while rows of it are open, when the
// same query is compiled afresh instead (SQLite runs a statement once at a
// time).
type keptStmt struct {
	st   driver.Stmt
	busy bool
}

// stmt returns the statement kept for query, preparing it on first use
// (making room by dropping another when the connection keeps enough); nil
// when it is busy.
func (c *keepingConn) stmt(ctx context.Context, query string) (*keptStmt, error) {
	if k := c.kept[query]; k != nil {
		if k.busy {
			return nil, nil
		}
		return k, nil
	}
	if len(c.kept) >= maxKeptPerConn {
		for q, k := range c.kept { // one at random: the often used come back
			if !k.busy {
				k.st.Close()
				delete(c.kept, q)
				break
			}
		}
	}
	st, err := c.conn.PrepareContext(ctx, castLimits(query))
	if err != nil {
		return nil, err
	}
	k := &keptStmt{st: st}
	c.kept[query] = k
	return k, nil
}

func (c *keepingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	k, err := c.stmt(ctx, query)
	if err != nil || k == nil {
		return c.conn.QueryContext(ctx, castLimits(query), args)
	}
	rows, err := k.st.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	k.busy = true
	return &keptRows{Rows: rows, k: k}, nil
}

func (c *keepingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if script(query) {
		return c.conn.ExecContext(ctx, query, args)
	}
	k, err := c.stmt(ctx, query)
	if err != nil || k == nil {
		return c.conn.ExecContext(ctx, castLimits(query), args)
	}
	return k.st.(driver.StmtExecContext).ExecContext(ctx, args)
}

// Close finalizes the kept statements, then closes the connection.
func (c *keepingConn) Close() error {
	for _, k := range c.kept {
		k.st.Close()
	}
	return c.conn.Close()
}

func (c *keepingConn) Prepare(query string) (driver.Stmt, error) { return c.conn.Prepare(query) }
func (c *keepingConn) Begin() (driver.Tx, error)                 { return c.conn.Begin() } //nolint:staticcheck // driver.Conn's
func (c *keepingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.conn.BeginTx(ctx, opts)
}

// castLimits returns query with each LIMIT whose value is a lone parameter
// (LIMIT ?, ?NNN, :name, @name or $name) written LIMIT CAST(param AS
// INTEGER). SQLite plans a statement whose LIMIT is a lone parameter from
// the value bound to it, and so marks the statement to be compiled again
// whenever that parameter is bound: such a statement would be compiled
// twice at every run, once by the prepare and once by its first step,
// kept or not. River's fetch of jobs is one (LIMIT ?3, the workers free),
// run for every job and every idle look, and so are the store's paged
// reads. The cast hides the value from the planner, which then plans the
// LIMIT as an expression, and returns the same integer. String literals,
// quoted names and comments are left as they are.
func castLimits(query string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case c == '\'' || c == '"' || c == '`' || c == '[':
			end := c
			if c == '[' {
				end = ']'
			}
			j := strings.IndexByte(query[i+1:], end)
			if j < 0 {
				return query // unterminated: SQLite's error to give
			}
			i += j + 2 // a doubled quote starts the next literal, to the same effect
		case strings.HasPrefix(query[i:], "--"):
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				j = len(query) - i
			}
			i += j
		case strings.HasPrefix(query[i:], "/*"):
			j := strings.Index(query[i+2:], "*/")
			if j < 0 {
				return query
			}
			i += j + 4
		case (i == 0 || !identByte(query[i-1])) && len(query)-i > 5 && strings.EqualFold(query[i:i+5], "limit") && !identByte(query[i+5]):
			at := i + 5
			for at < len(query) && strings.IndexByte(" \t\r\n", query[at]) >= 0 {
				at++
			}
			end := paramEnd(query, at)
			if end > at {
				b.WriteString(query[last:at])
				if at == i+5 {
					b.WriteByte(' ') // LIMIT?
				}
				b.WriteString("CAST(")
				b.WriteString(query[at:end])
				b.WriteString(" AS INTEGER)")
				last = end
			}
			i = max(end, at)
		default:
			i++
		}
	}
	if last == 0 {
		return query
	}
	b.WriteString(query[last:])
	return b.String()
}

// paramEnd returns where the parameter that starts query[at:] ends (at
// when none starts there): ? with its number, or :, @ or $ with a name.
func paramEnd(query string, at int) int {
	if at >= len(query) || strings.IndexByte("?:@$", query[at]) < 0 {
		return at
	}
	end := at + 1
	for end < len(query) && identByte(query[end]) && (query[at] != '?' || query[end] >= '0' && query[end] <= '9') {
		end++
	}
	if query[at] != '?' && end == at+1 {
		return at // a sigil without a name
	}
	return end
}

// identByte reports a byte of an unquoted name (or a parameter's number).
func identByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// script reports whether query is several statements (a migration's):
// run once, not kept.
func script(query string) bool {
	return strings.Contains(strings.TrimRight(query, "; \t\r\n"), ";")
}

// PrepareContext lends the statement kept for query, busy until the
// caller closes it; a fresh one when it is busy already.
func (c *keepingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	k, err := c.stmt(ctx, query)
	if err != nil || k == nil {
		return c.conn.PrepareContext(ctx, castLimits(query))
	}
	k.busy = true
	return &lentStmt{k: k}, nil
}
func (c *keepingConn) Ping(ctx context.Context) error         { return c.conn.Ping(ctx) }
func (c *keepingConn) ResetSession(ctx context.Context) error { return c.conn.ResetSession(ctx) }
func (c *keepingConn) IsValid() bool                          { return c.conn.IsValid() }

// keptRows frees its statement for the next call when closed.
type keptRows struct {
	driver.Rows
	k *keptStmt
}

func (r *keptRows) Close() error {
	err := r.Rows.Close()
	r.k.busy = false
	return err
}

// lentStmt is a kept statement prepared by the caller (database/sql's
// PrepareContext): closing it gives it back to the connection.
type lentStmt struct{ k *keptStmt }

func (s *lentStmt) Close() error  { s.k.busy = false; return nil }
func (s *lentStmt) NumInput() int { return s.k.st.NumInput() }

//nolint:staticcheck // driver.Stmt's
func (s *lentStmt) Exec(args []driver.Value) (driver.Result, error) { return s.k.st.Exec(args) }

//nolint:staticcheck // driver.Stmt's
func (s *lentStmt) Query(args []driver.Value) (driver.Rows, error) { return s.k.st.Query(args) }

func (s *lentStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.k.st.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (s *lentStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.k.st.(driver.StmtQueryContext).QueryContext(ctx, args)
}
