package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/sqlstore"
)

// openMigrated opens a migrated database in t's temporary directory.
func openMigrated(t *testing.T) *DB {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return db
}

// batchQueued waits until n transactions wait in db's writer queue.
func batchQueued(t *testing.T, db *DB, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := db.writer.Queued()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("writer queue: got %d, want %d", got, n)
		}
		time.Sleep(time.Millisecond) // the poll interval; the deadline bounds the wait
	}
}

// hold runs a transaction of opts's kind that holds the writer until
// release is called; release returns the transaction's result.
func hold(t *testing.T, db *DB, opts sqlstore.TxOptions) (release func() error) {
	t.Helper()
	started, free := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- engine{db}.InTx(context.Background(), opts, func(sqlstore.Tx) error {
			close(started)
			<-free
			return nil
		})
	}()
	<-started
	return func() error {
		close(free)
		return <-done
	}
}

// insertMeta is a transaction writing one row named name.
func insertMeta(name string) func(sqlstore.Tx) error {
	return func(tx sqlstore.Tx) error {
		_, err := tx.Exec(context.Background(), `INSERT INTO meta (name, value, updated_at) VALUES (?, x'', 0)`, name)
		return err
	}
}

// metaNames returns which of names have a row, as committed (the reader
// sees only committed writes).
func metaNames(t *testing.T, db *DB, names ...string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, n := range names {
		var count int
		if err := db.Reader.QueryRow(`SELECT count(*) FROM meta WHERE name = ?`, n).Scan(&count); err != nil {
			t.Fatal(err)
		}
		out[n] = count == 1
	}
	return out
}

// runQueued starts each transaction as a batched InTx while the writer is
// held, waits until all are queued, lets prepare act on the queue, frees
// the writer and returns each transaction's result.
func runQueued(t *testing.T, db *DB, ctxs []context.Context, fns []func(sqlstore.Tx) error, prepare func()) []error {
	t.Helper()
	release := hold(t, db, sqlstore.TxOptions{})
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = engine{db}.InTx(ctxs[i], sqlstore.TxOptions{Batched: true}, fn)
		}()
		batchQueued(t, db, i+1) // one by one: the queue's order is the start order
	}
	prepare()
	if err := release(); err != nil {
		t.Errorf("the transaction holding the writer: %v", err)
	}
	wg.Wait()
	return errs
}

// TestBatch checks the group commit: transactions queued while the writer
// is busy commit together, one that fails or whose caller gave up is
// rolled back alone, and one that breaks the transaction fails alone while
// the others run again and commit.
func TestBatch(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	t.Run("OneFailsAlone", func(t *testing.T) {
		t.Parallel()
		db := openMigrated(t)
		gone, cancel := context.WithCancel(context.Background())
		bg := context.Background()
		fns := []func(sqlstore.Tx) error{
			insertMeta("a"),
			func(tx sqlstore.Tx) error {
				if err := insertMeta("b")(tx); err != nil {
					return err
				}
				return errBoom
			},
			insertMeta("c"),
			insertMeta("d"),
			insertMeta("a"), // a unique violation: "a" is written before it
		}
		errs := runQueued(t, db, []context.Context{bg, bg, gone, bg, bg}, fns, cancel)
		if errs[0] != nil || errs[3] != nil {
			t.Errorf("a and d: got %v and %v, want both nil", errs[0], errs[3])
		}
		if !errors.Is(errs[1], errBoom) {
			t.Errorf("b: got %v, want %v", errs[1], errBoom)
		}
		if !errors.Is(errs[2], context.Canceled) {
			t.Errorf("c, given up before its turn: got %v, want %v", errs[2], context.Canceled)
		}
		if err := (engine{db}).Translate(errs[4]); !errors.Is(err, sqlstore.ErrUnique) {
			t.Errorf("a again: got %v, want a unique violation", errs[4])
		}
		got := metaNames(t, db, "a", "b", "c", "d")
		if want := map[string]bool{"a": true, "b": false, "c": false, "d": true}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("rows committed: got %v, want %v", got, want)
		}
	})
	t.Run("BrokenTransaction", func(t *testing.T) {
		t.Parallel()
		db := openMigrated(t)
		bg := context.Background()
		fns := []func(sqlstore.Tx) error{
			insertMeta("a"),
			func(tx sqlstore.Tx) error {
				if err := insertMeta("b")(tx); err != nil {
					return err
				}
				_, err := tx.Exec(bg, `ROLLBACK`) // as SQLite does on a disk error
				return err
			},
			func(tx sqlstore.Tx) error { panic("c panics") },
			insertMeta("d"),
		}
		errs := runQueued(t, db, []context.Context{bg, bg, bg, bg}, fns, func() {})
		if errs[0] != nil || errs[3] != nil {
			t.Errorf("a and d: got %v and %v, want both nil", errs[0], errs[3])
		}
		if errs[1] == nil || errs[2] == nil {
			t.Errorf("b (broke the transaction) and c (panicked): got %v and %v, want errors", errs[1], errs[2])
		}
		got := metaNames(t, db, "a", "b", "d")
		if want := map[string]bool{"a": true, "b": false, "d": true}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("rows committed: got %v, want %v", got, want)
		}
		if err := (engine{db}).InTx(bg, sqlstore.TxOptions{}, insertMeta("e")); err != nil {
			t.Errorf("a transaction after the batch: %v", err)
		}
	})
	t.Run("DeadlineWhileTheWriterIsHeld", func(t *testing.T) {
		// A database that does not answer: the leader (waiting for the
		// writer's connection, which River, say, holds) and one queued
		// behind it both give up at their deadline instead of waiting for
		// as long as the writer is held.
		t.Parallel()
		db := openMigrated(t)
		held, err := db.Writer.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 2)
		for i, name := range []string{"a", "b"} {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				defer cancel()
				errs <- engine{db}.InTx(ctx, sqlstore.TxOptions{Batched: true}, insertMeta(name))
			}()
			batchQueued(t, db, i+1)
		}
		for range 2 {
			select {
			case err := <-errs:
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("got %v, want %v", err, context.DeadlineExceeded)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("a batched transaction still waits for the held writer past its deadline")
			}
		}
		if inUse, waiting := db.Writer.Stats().InUse, db.writer.Queued(); inUse != 1 || waiting != 0 {
			t.Errorf("the writer after the batch gave up: %d connection(s) in use with %d waiting, want still the test's with none waiting", inUse, waiting)
		}
		held.Close()
		if got := metaNames(t, db, "a", "b"); got["a"] || got["b"] {
			t.Errorf("rows committed: got %v, want none", got)
		}
		if err := (engine{db}).InTx(context.Background(), sqlstore.TxOptions{Batched: true}, insertMeta("c")); err != nil {
			t.Errorf("a transaction after: %v", err)
		}
	})
	t.Run("AnsweredAfterCommit", func(t *testing.T) {
		t.Parallel()
		db := openMigrated(t)
		const writers, each = 16, 25
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					name := fmt.Sprintf("w%d-%d", w, i)
					if err := (engine{db}).InTx(context.Background(), sqlstore.TxOptions{Batched: true}, insertMeta(name)); err != nil {
						errs <- fmt.Errorf("%s: %w", name, err)
						continue
					}
					var n int
					if err := db.Reader.QueryRow(`SELECT count(*) FROM meta WHERE name = ?`, name).Scan(&n); err != nil || n != 1 {
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

// metaJoint is a joint (sqlstore.Joint) whose items are meta rows' names:
// it inserts those not starting with "alone" in one statement, and fails,
// after writing them, when one is "fail".
type metaJoint struct{ calls int }

func (j *metaJoint) Join(ctx context.Context, tx sqlstore.Tx, items []any) ([]bool, error) {
	j.calls++
	ran := make([]bool, len(items))
	for i, it := range items {
		name := it.(string)
		if strings.HasPrefix(name, "alone") {
			continue
		}
		if err := insertMeta(name)(tx); err != nil {
			return nil, err
		}
		if name == "fail" {
			return nil, errors.New("boom")
		}
		ran[i] = true
	}
	return ran, nil
}

// TestBatchJoint checks a batch's joint: the transactions naming it run
// together, once, those it leaves on their own (fn) after it, and all on
// their own when it fails, its writes undone.
func TestBatchJoint(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, names ...string) (*DB, *metaJoint, []error) {
		db := openMigrated(t)
		j := &metaJoint{}
		release := hold(t, db, sqlstore.TxOptions{})
		errs := make([]error, len(names))
		var wg sync.WaitGroup
		for i, name := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				opts := sqlstore.TxOptions{Batched: true, Joint: j, Item: name}
				errs[i] = engine{db}.InTx(context.Background(), opts, insertMeta("own-"+name))
			}()
			batchQueued(t, db, i+1)
		}
		if err := release(); err != nil {
			t.Errorf("the transaction holding the writer: %v", err)
		}
		wg.Wait()
		return db, j, errs
	}
	t.Run("RunsTogether", func(t *testing.T) {
		t.Parallel()
		db, j, errs := run(t, "a", "alone1", "b")
		for i, err := range errs {
			if err != nil {
				t.Errorf("transaction %d: %v", i, err)
			}
		}
		if j.calls != 1 {
			t.Errorf("joint called %d times, want 1", j.calls)
		}
		got := metaNames(t, db, "a", "b", "own-a", "own-b", "alone1", "own-alone1")
		want := map[string]bool{"a": true, "b": true, "own-a": false, "own-b": false, "alone1": false, "own-alone1": true}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("rows committed: got %v, want %v", got, want)
		}
	})
	t.Run("FailsAllAlone", func(t *testing.T) {
		t.Parallel()
		db, _, errs := run(t, "a", "fail", "b")
		for i, err := range errs {
			if err != nil {
				t.Errorf("transaction %d: %v", i, err)
			}
		}
		got := metaNames(t, db, "a", "fail", "b", "own-a", "own-fail", "own-b")
		want := map[string]bool{"a": false, "fail": false, "b": false, "own-a": true, "own-fail": true, "own-b": true}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("rows committed: got %v, want %v", got, want)
		}
	})
}
