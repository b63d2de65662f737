package sqlite

import (
	"context"
	"errors"
	"testing"

	"github.com/heraldpush/herald/sqlstore"
)

// TestWriterUrgentFirst: waiting requests get the writer before bulk work
// that waited longer, each kind in order of arrival.
func TestWriterUrgentFirst(t *testing.T) {
	t.Parallel()
	db := openMigrated(t)
	ctx := context.Background()
	release := hold(t, db, sqlstore.TxOptions{Bulk: true})
	order := make(chan string, 4)
	start := func(name string, opts sqlstore.TxOptions) {
		go func() {
			err := engine{db}.InTx(ctx, opts, func(sqlstore.Tx) error {
				order <- name
				return nil
			})
			if err != nil {
				order <- "error: " + err.Error()
			}
		}()
	}
	bulk, urgent := sqlstore.TxOptions{Bulk: true}, sqlstore.TxOptions{}
	start("bulk 1", bulk)
	batchQueued(t, db, 1)
	start("bulk 2", bulk)
	batchQueued(t, db, 2)
	start("urgent 1", urgent)
	batchQueued(t, db, 3)
	start("urgent 2", urgent)
	batchQueued(t, db, 4)
	if err := release(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"urgent 1", "urgent 2", "bulk 1", "bulk 2"} {
		if got := <-order; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	// Every waiter left: the writer is free again.
	if err := (engine{db}).InTx(ctx, bulk, func(sqlstore.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
}

// TestWriterBatchedBeforeBulk: transactions that may share a commit are
// requests too: they go before bulk work that waited longer, together in
// one batch, and bulk work never joins it.
func TestWriterBatchedBeforeBulk(t *testing.T) {
	t.Parallel()
	db := openMigrated(t)
	ctx := context.Background()
	release := hold(t, db, sqlstore.TxOptions{})
	type ran struct {
		name string
		tx   sqlstore.Tx
	}
	order := make(chan ran, 4)
	start := func(name string, opts sqlstore.TxOptions) {
		go func() {
			err := engine{db}.InTx(ctx, opts, func(tx sqlstore.Tx) error {
				order <- ran{name, tx}
				return nil
			})
			if err != nil {
				order <- ran{name: "error: " + err.Error()}
			}
		}()
	}
	bulk, batched := sqlstore.TxOptions{Bulk: true, Batched: true}, sqlstore.TxOptions{Batched: true}
	start("bulk 1", bulk)
	batchQueued(t, db, 1)
	start("batched a", batched)
	batchQueued(t, db, 2)
	start("bulk 2", bulk)
	batchQueued(t, db, 3)
	start("batched b", batched)
	batchQueued(t, db, 4)
	if err := release(); err != nil {
		t.Fatal(err)
	}
	var got []ran
	for _, want := range []string{"batched a", "batched b", "bulk 1", "bulk 2"} {
		r := <-order
		if r.name != want {
			t.Errorf("got %s, want %s", r.name, want)
		}
		got = append(got, r)
	}
	if got[0].tx != got[1].tx {
		t.Error("the batched transactions queued together ran in different database transactions, want one batch")
	}
	if got[1].tx == got[2].tx || got[2].tx == got[3].tx {
		t.Error("bulk work ran in a batch with others, want each alone")
	}
}

// TestWriterCancelled: a waiter whose context ends leaves the queue, and the
// writer goes on to the next.
func TestWriterCancelled(t *testing.T) {
	t.Parallel()
	db := openMigrated(t)
	release := hold(t, db, sqlstore.TxOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() {
		gaveUp <- engine{db}.InTx(ctx, sqlstore.TxOptions{}, func(sqlstore.Tx) error {
			return errors.New("ran after its caller gave up")
		})
	}()
	batchQueued(t, db, 1)
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: got %v, want context.Canceled", err)
	}
	batchQueued(t, db, 0)
	entered := make(chan error, 1)
	go func() {
		entered <- engine{db}.InTx(context.Background(), sqlstore.TxOptions{Bulk: true}, func(sqlstore.Tx) error { return nil })
	}()
	batchQueued(t, db, 1)
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if err := <-entered; err != nil {
		t.Fatal(err)
	}
}
