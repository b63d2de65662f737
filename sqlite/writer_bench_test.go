package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald/sqlstore"
)

// BenchmarkUrgentDuringBulk measures a request's write while bulk work
// keeps the writer busy (bulkWorkers goroutines writing a fan-out's small
// transactions back to back): the latency of each of b.N requests'
// transactions, one after another, reported as p50 and p99, and the bulk
// transactions committed meanwhile per second.
func BenchmarkUrgentDuringBulk(b *testing.B) {
	const bulkWorkers, rowsPerBulk = 8, 50
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "herald.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	write := func(opts sqlstore.TxOptions, names ...string) error {
		return engine{db}.InTx(ctx, opts, func(tx sqlstore.Tx) error {
			for _, n := range names {
				if _, err := tx.Exec(ctx, `INSERT INTO meta (name, value, updated_at) VALUES (?, x'', 0)`, n); err != nil {
					return err
				}
			}
			return nil
		})
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var bulk atomic.Int64
	for w := range bulkWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			names := make([]string, rowsPerBulk)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				for j := range names {
					names[j] = fmt.Sprintf("bulk-%d-%d-%d", w, i, j)
				}
				if err := write(sqlstore.TxOptions{Bulk: true}, names...); err != nil {
					b.Error(err)
					return
				}
				bulk.Add(1)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond) // let the bulk work fill the queue
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	start, before := time.Now(), bulk.Load()
	for i := range b.N {
		t0 := time.Now()
		if err := write(sqlstore.TxOptions{}, fmt.Sprintf("urgent-%d", i)); err != nil {
			b.Fatal(err)
		}
		lat[i] = time.Since(t0)
	}
	b.StopTimer()
	elapsed, done := time.Since(start), bulk.Load()-before
	close(stop)
	wg.Wait()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[b.N/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[b.N*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(done)/elapsed.Seconds(), "bulk-tx/s")
}
