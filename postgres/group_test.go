package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/postgres/pgtest"
	"github.com/heraldpush/herald/sqlstore"
)

// openBatchDB opens a migrated store in a schema of its own whose group
// commit has one lane, so that every transaction queued while a batch
// runs shares the next.
func openBatchDB(t *testing.T) *DB {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, pgtest.NewSchema(t, pgtest.BaseURL(t), map[string]string{"pool_max_conns": "4"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	db.batch = newBatch(db, 1)
	return db
}

// insertMeta is a transaction writing one row named name.
func insertMeta(name string) func(sqlstore.Tx) error {
	return func(tx sqlstore.Tx) error {
		_, err := tx.Exec(context.Background(), `INSERT INTO meta (name, value, updated_at) VALUES (?, '', 0)`, name)
		return err
	}
}

// metaNames returns which of names have a committed row.
func metaNames(t *testing.T, db *DB, names ...string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, n := range names {
		var count int
		if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM meta WHERE name = $1`, n).Scan(&count); err != nil {
			t.Fatal(err)
		}
		out[n] = count == 1
	}
	return out
}

// runQueued runs a batched transaction that holds the lane until each of
// fns is queued behind it (one by one: the queue's order is the start
// order), lets prepare act, and returns each transaction's result.
func runQueued(t *testing.T, db *DB, ctxs []context.Context, fns []func(sqlstore.Tx) error, prepare func()) []error {
	t.Helper()
	started, release := make(chan struct{}), make(chan struct{})
	holder := make(chan error, 1)
	go func() {
		holder <- engine{db}.InTx(context.Background(), sqlstore.TxOptions{Batched: true}, func(tx sqlstore.Tx) error {
			close(started)
			<-release
			return insertMeta("holder")(tx)
		})
	}()
	<-started
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = engine{db}.InTx(ctxs[i], sqlstore.TxOptions{Batched: true}, fn)
		}()
		batchQueued(t, db, i+1)
	}
	prepare()
	close(release)
	wg.Wait()
	if err := <-holder; err != nil {
		t.Errorf("the transaction holding the lane: %v", err)
	}
	return errs
}

// batchQueued waits until n transactions wait in db's batch queue.
func batchQueued(t *testing.T, db *DB, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for db.batch.Queued() != n {
		if time.Now().After(deadline) {
			t.Fatalf("batch queue: got %d, want %d", db.batch.Queued(), n)
		}
		time.Sleep(time.Millisecond) // the poll interval; the deadline bounds the wait
	}
}

// TestBatch checks the group commit on PostgreSQL: transactions queued
// while a batch runs commit together; one that fails (its own error, a
// statement's, a pipeline's, a unique violation, a panic) or whose caller
// gave up is rolled back alone to its savepoint; one that breaks the
// connection fails alone while the others run again and commit; and none
// is answered before its commit.
func TestBatch(t *testing.T) {
	pgtest.BaseURL(t)
	t.Parallel()
	errBoom := errors.New("boom")
	bg := context.Background()
	t.Run("OneFailsAlone", func(t *testing.T) {
		t.Parallel()
		db := openBatchDB(t)
		gone, cancel := context.WithCancel(bg)
		fns := []func(sqlstore.Tx) error{
			insertMeta("a"),
			func(tx sqlstore.Tx) error {
				if err := insertMeta("b")(tx); err != nil {
					return err
				}
				return errBoom
			},
			insertMeta("c"),
			func(tx sqlstore.Tx) error { // a statement fails: the transaction is aborted until rolled back
				if err := insertMeta("d")(tx); err != nil {
					return err
				}
				_, err := tx.Exec(bg, `SELECT 1 / (SELECT count(*) FROM meta WHERE name = 'none')`)
				return err
			},
			func(tx sqlstore.Tx) error { // pipelined: the first statement with the savepoint
				return tx.Pipeline(bg, []sqlstore.Stmt{
					{Query: `INSERT INTO meta (name, value, updated_at) VALUES (?, '', 0)`, Args: []any{"e"}},
					{Query: `INSERT INTO meta (name, value, updated_at) VALUES (?, '', 0)`, Args: []any{"a"}},
				})
			},
			func(sqlstore.Tx) error { panic("f panics") },
			insertMeta("g"),
			insertMeta("a"),                        // a unique violation: "a" is written before it
			func(sqlstore.Tx) error { return nil }, // sends nothing
			insertMeta("h"),
		}
		ctxs := []context.Context{bg, bg, gone, bg, bg, bg, bg, bg, bg, bg}
		errs := runQueued(t, db, ctxs, fns, cancel)
		for _, i := range []int{0, 6, 8, 9} {
			if errs[i] != nil {
				t.Errorf("transaction %d (a, g, nothing, h): got %v, want nil", i, errs[i])
			}
		}
		if !errors.Is(errs[1], errBoom) {
			t.Errorf("b: got %v, want %v", errs[1], errBoom)
		}
		if !errors.Is(errs[2], context.Canceled) {
			t.Errorf("c, given up before its turn: got %v, want %v", errs[2], context.Canceled)
		}
		if errs[3] == nil || errs[5] == nil {
			t.Errorf("d (division by zero) and f (panicked): got %v and %v, want errors", errs[3], errs[5])
		}
		for _, i := range []int{4, 7} {
			if err := (engine{db}).Translate(errs[i]); !errors.Is(err, sqlstore.ErrUnique) {
				t.Errorf("transaction %d writing a again: got %v, want a unique violation", i, errs[i])
			}
		}
		got := metaNames(t, db, "holder", "a", "b", "c", "d", "e", "g", "h")
		want := map[string]bool{"holder": true, "a": true, "b": false, "c": false, "d": false, "e": false, "g": true, "h": true}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("rows committed: got %v, want %v", got, want)
		}
	})
	t.Run("BrokenConnection", func(t *testing.T) {
		t.Parallel()
		db := openBatchDB(t)
		fns := []func(sqlstore.Tx) error{
			insertMeta("a"),
			func(tx sqlstore.Tx) error {
				if err := insertMeta("b")(tx); err != nil {
					return err
				}
				_, err := tx.Exec(bg, `SELECT pg_terminate_backend(pg_backend_pid())`)
				return err
			},
			insertMeta("c"),
		}
		errs := runQueued(t, db, []context.Context{bg, bg, bg}, fns, func() {})
		if errs[0] != nil || errs[2] != nil {
			t.Errorf("a and c: got %v and %v, want both nil", errs[0], errs[2])
		}
		if errs[1] == nil {
			t.Error("b (ended its connection): got nil, want an error")
		}
		got := metaNames(t, db, "a", "b", "c")
		if want := map[string]bool{"a": true, "b": false, "c": true}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("rows committed: got %v, want %v", got, want)
		}
	})
	t.Run("DeadlineWhileAStatementWaits", func(t *testing.T) {
		// A database that does not answer, as far as the batch can tell:
		// its statement waits for a row another transaction holds. The
		// batch ends at its leader's deadline, not when the row is freed.
		t.Parallel()
		db := openBatchDB(t)
		if err := (engine{db}).InTx(bg, sqlstore.TxOptions{}, insertMeta("held")); err != nil {
			t.Fatal(err)
		}
		holder, err := db.Pool.Begin(bg)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Rollback(bg)
		if _, err := holder.Exec(bg, `SELECT name FROM meta WHERE name = 'held' FOR UPDATE`); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(bg, 300*time.Millisecond)
			defer cancel()
			done <- engine{db}.InTx(ctx, sqlstore.TxOptions{Batched: true}, func(tx sqlstore.Tx) error {
				_, err := tx.Exec(ctx, `UPDATE meta SET updated_at = 1 WHERE name = 'held'`)
				return err
			})
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("the update waiting for a held row: got no error, want its deadline's")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a batched transaction still waits for a held row past its deadline")
		}
	})
	t.Run("AnsweredAfterCommit", func(t *testing.T) {
		t.Parallel()
		db := openBatchDB(t)
		db.batch = newBatch(db, lanes)
		const writers, each = 16, 10
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					name := fmt.Sprintf("w%d-%d", w, i)
					if err := (engine{db}).InTx(bg, sqlstore.TxOptions{Batched: true}, insertMeta(name)); err != nil {
						errs <- fmt.Errorf("%s: %w", name, err)
						continue
					}
					var n int
					if err := db.Pool.QueryRow(bg, `SELECT count(*) FROM meta WHERE name = $1`, name).Scan(&n); err != nil || n != 1 {
						errs <- fmt.Errorf("%s: answered, then read %d rows (%v), want 1", name, n, err)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}
