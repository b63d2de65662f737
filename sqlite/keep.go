package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"

	"modernc.org/sqlite"
)

// maxKeptPerConn bounds the statements a connection keeps; past it, query
// text is compiled at each call as before.
const maxKeptPerConn = 128

// openKeeping opens a pool whose connections keep the queries they are
// sent as text. database/sql hands a query that comes as text (not a
// *sql.Stmt) to the driver, which compiles it at every call: River's
// queries come so (its insert, fetch and completion of every job), and
// compiling them cost as much as running them. Only queries that return
// rows are kept (River's are; migrations' scripts, run once, are not); the
// store's own statements are kept already (see stmts).
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
	st, err := c.conn.PrepareContext(ctx, query)
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
		return c.conn.QueryContext(ctx, query, args)
	}
	rows, err := k.st.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	k.busy = true
	return &keptRows{Rows: rows, k: k}, nil
}

func (c *keepingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.conn.ExecContext(ctx, query, args)
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
func (c *keepingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.conn.PrepareContext(ctx, query)
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
