package sqlite

import (
	"sync"
	"testing"

	"github.com/heraldpush/herald/sqlstore"
)

// Together returns storetest.Harness.Together for db: the writer is held
// by a transaction until every call's transaction is queued behind it (one
// by one, so the queue's order is the calls').
func Together(t *testing.T, db *DB) func(calls ...func()) {
	return func(calls ...func()) {
		t.Helper()
		release := hold(t, db, sqlstore.TxOptions{})
		var wg sync.WaitGroup
		for i, call := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				call()
			}()
			batchQueued(t, db, i+1)
		}
		if err := release(); err != nil {
			t.Errorf("the transaction holding the writer: %v", err)
		}
		wg.Wait()
	}
}
