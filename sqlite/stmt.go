package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// maxStmts bounds the statements kept per pool. The shared SQL is a
// bounded set (IN lists come in a few padded lengths), so the bound is
// only a guard: past it, statements are compiled each time as before.
const maxStmts = 512

// stmts keeps the store's statements prepared on a pool, so that SQLite
// compiles each once per connection instead of at every run (compiling
// cost about as much as running the small statements of the send path).
// database/sql prepares a kept statement on each connection the first
// time it runs there, and a transaction reuses it (Tx.StmtContext).
type stmts struct {
	pool *sql.DB
	mu   sync.Mutex
	m    map[string]*sql.Stmt
}

func newStmts(pool *sql.DB) *stmts { return &stmts{pool: pool, m: map[string]*sql.Stmt{}} }

// kept returns the statement kept for query, or nil.
func (s *stmts) kept(query string) *sql.Stmt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[query]
}

// prepare returns the statement for query, preparing and keeping it on
// first use; nil (run it unprepared) once maxStmts are kept. It takes a
// connection of the pool, so it must not be called while the caller holds
// the pool's only one (inside a write transaction).
func (s *stmts) prepare(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := s.kept(query); st != nil {
		return st, nil
	}
	s.mu.Lock()
	full := len(s.m) >= maxStmts
	s.mu.Unlock()
	if full {
		return nil, nil
	}
	st, err := s.pool.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if kept := s.m[query]; kept != nil {
		st.Close() // prepared by another caller meanwhile
		return kept, nil
	}
	s.m[query] = st
	return st, nil
}

// close closes every kept statement.
func (s *stmts) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for q, st := range s.m {
		errs = append(errs, st.Close())
		delete(s.m, q)
	}
	return errors.Join(errs...)
}
