package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/identity"
)

// TestAccessChainTwoNodes appends access records from two stores on one
// schema at once, as two nodes do: each append locks the chain's head, so
// together they make one chain without gaps that verifies.
func TestAccessChainTwoNodes(t *testing.T) {
	url := newSchema(t, databaseURL(t))
	t.Parallel()
	ctx := context.Background()
	nodes := [2]interface {
		AppendAccessRecords(context.Context, access.Key, []access.Record) ([]access.Record, error)
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
					r := access.Record{At: time.Now(), Actor: &owner, Method: "GET", Route: fmt.Sprintf("GET /n%d/a%d/%d", n, a, i), Status: 200}
					_, err := node.AppendAccessRecords(ctx, access.Key("k"), []access.Record{r, r})
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
	v, err := first.VerifyAccessRecords(ctx, access.Key("k"), nil)
	if want := int64(2 * appenders * each * 2); err != nil || !v.OK || v.Records != want {
		t.Errorf("verify: got %+v, %v; want ok with %d records", v, err, want)
	}
}

// TestPendingRecordsTwoNodes: two nodes appending what waits for a record
// (ended attempt windows, abandoned intents) at once, while both append
// records, record each window and intent once, in one chain that verifies.
func TestPendingRecordsTwoNodes(t *testing.T) {
	url := newSchema(t, databaseURL(t))
	t.Parallel()
	ctx := context.Background()
	first := open(t, url)
	if err := first.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	second := open(t, url)
	start := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	const windows, intents = 30, 10
	for i := range windows {
		for range identity.AttemptLimit + 2 {
			if _, err := first.CountAttempt(ctx, []string{identity.AddressKey(fmt.Sprint("192.0.2.", i))}, identity.AttemptLimit, start); err != nil {
				t.Fatal(err)
			}
		}
	}
	owner := herald.OwnerID
	for i := range intents {
		r := access.Record{At: start, Actor: &owner, Method: "POST", Route: "POST /admin/v1/apps", IP: "127.0.0.1"}
		if err := second.RecordIntent(ctx, fmt.Sprint("int_", i), r); err != nil {
			t.Fatal(err)
		}
	}
	key := access.Key("k")
	var wg sync.WaitGroup
	var mu sync.Mutex
	appended := 0
	errs := make(chan error, 16)
	for _, node := range []interface {
		RecordPending(context.Context, access.Key, time.Time) (int, error)
		AppendAccessRecords(context.Context, access.Key, []access.Record) ([]access.Record, error)
	}{first, second, first, second} {
		wg.Go(func() {
			n, err := node.RecordPending(ctx, key, time.Now())
			if err != nil {
				errs <- err
			}
			mu.Lock()
			appended += n
			mu.Unlock()
			if _, err := node.AppendAccessRecords(ctx, key, []access.Record{{At: time.Now(), Actor: &owner, Method: "GET", Route: "GET /x", Status: 200}}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("RecordPending or append: %v", err)
	}
	if appended != windows+intents {
		t.Errorf("pending records appended: %d, want %d (each window and intent once)", appended, windows+intents)
	}
	v, err := first.VerifyAccessRecords(ctx, key, nil)
	if want := int64(windows + intents + 4); err != nil || !v.OK || v.Records != want {
		t.Errorf("verify: got %+v, %v; want ok with %d records", v, err, want)
	}
}
