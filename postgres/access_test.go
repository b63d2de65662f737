package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

// TestAccessChainTwoNodes appends access records from two stores on one
// schema at once, as two nodes do: each append locks the chain's head, so
// together they make one chain without gaps that verifies.
func TestAccessChainTwoNodes(t *testing.T) {
	url := newSchema(t, databaseURL(t))
	t.Parallel()
	ctx := context.Background()
	nodes := [2]interface {
		AppendAccessRecords(context.Context, herald.AccessKey, []herald.AccessRecord) ([]herald.AccessRecord, error)
	}{}
	first := open(t, url)
	if err := first.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	nodes[0], nodes[1] = first, open(t, url)
	const appenders, each = 4, 15
	var wg sync.WaitGroup
	errs := make(chan error, 2*appenders*each)
	start := make(chan struct{})
	owner := herald.OwnerID
	for n, node := range nodes {
		for a := range appenders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := range each {
					r := herald.AccessRecord{At: time.Now(), Actor: &owner, Method: "GET", Route: fmt.Sprintf("GET /n%d/a%d/%d", n, a, i), Status: 200}
					_, err := node.AppendAccessRecords(ctx, herald.AccessKey("k"), []herald.AccessRecord{r, r})
					if err != nil {
						errs <- err
					}
				}
			}()
		}
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("AppendAccessRecords: %v", err)
	}
	v, err := first.VerifyAccessRecords(ctx, herald.AccessKey("k"), nil)
	if want := int64(2 * appenders * each * 2); err != nil || !v.OK || v.Records != want {
		t.Errorf("verify: got %+v, %v; want ok with %d records", v, err, want)
	}
}
