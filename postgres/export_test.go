package postgres

import (
	"context"
	"sync"
	"testing"

	"github.com/heraldpush/herald/sqlstore"
)

// Together returns storetest.Harness.Together for db: its group commit
// gets one lane, held by a transaction until every call's transaction is
// queued behind it (one by one, so the queue's order is the calls'). It
// is to be called while nothing else writes.
func Together(t *testing.T, db *DB) func(calls ...func()) {
	return func(calls ...func()) {
		t.Helper()
		db.batch = newBatch(db, 1)
		started, release := make(chan struct{}), make(chan struct{})
		holder := make(chan error, 1)
		go func() {
			holder <- engine{db}.InTx(context.Background(), sqlstore.TxOptions{Batched: true}, func(sqlstore.Tx) error {
				close(started)
				<-release
				return nil
			})
		}()
		<-started
		var wg sync.WaitGroup
		for i, call := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				call()
			}()
			batchQueued(t, db, i+1)
		}
		close(release)
		wg.Wait()
		if err := <-holder; err != nil {
			t.Errorf("the transaction holding the lane: %v", err)
		}
	}
}
