package admin_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/sendstore"
	"github.com/heraldpush/herald/server"
)

// TestPushRecipientsMemory (HERALD_TEST_LONG): the recipients export of a
// push of HERALD_TEST_RECIPIENTS tokens (default 200,000; a tenth
// suppressed, so rows among the slots) streams every line while the heap
// stays within a bound far below what the push's deliveries take in
// memory at once (measured beside it with Deliveries up to 200,000
// tokens, for the figures).
func TestPushRecipientsMemory(t *testing.T) {
	testenv.Long(t, "a push of 200,000 tokens recorded and exported")
	n := testenv.EnvInt("HERALD_TEST_RECIPIENTS", 200_000)
	h := testenv.Start(t, testenv.Options{QuietLog: true, Overrides: server.Overrides{IdleQueue: true}})
	e := h.Env
	a := h.NewApp(map[string]any{"tier": "business"})
	res := e.Server(t, a, http.MethodPost, "/api/push/v2/users", map[string]any{"userIds": []any{"u0"}, "title": "t", "content": "c"})
	pushID := res.Header.Get("X-Push-Id")
	if res.Status != http.StatusOK || pushID == "" {
		t.Fatalf("push: got %d %s", res.Status, res.Body)
	}
	ctx := context.Background()
	began := time.Now()
	const page, chunk = 10_000, 500
	for from := 0; from < n; from += page {
		var ds []herald.Delivery
		open := 0
		for seq := from; seq < min(from+page, n); seq++ {
			d := herald.Delivery{Seq: seq, UserID: fmt.Sprintf("user-%07d", seq), DeviceID: fmt.Sprintf("device-%07d-%s", seq, "0123456789abcdef"),
				Token: fmt.Sprintf("fcm-token-%0150d", seq), Platform: herald.PlatformAndroid, AppSourceVersion: "1.6.0", State: herald.DeliveryPending}
			if seq%10 == 9 {
				d.State = herald.DeliverySuppressedConsent
			} else {
				d.Chunk = from/chunk + open/chunk
				open++
			}
			ds = append(ds, d)
		}
		f := sendstore.Fanout{From: sendstore.FanoutCursor{Seq: from, Chunk: from / chunk}, To: sendstore.FanoutCursor{Seq: from + len(ds), Chunk: (from + page) / chunk},
			More: from+page < n, Deliveries: ds}
		if _, err := e.Store.StartSending(ctx, pushID, f); err != nil {
			t.Fatalf("record page at %d: %v", from, err)
		}
	}
	t.Logf("%d tokens recorded in %v", n, time.Since(began).Round(time.Millisecond))

	base, peak := heapPeak(func() {
		began = time.Now()
		res, err := http.DefaultClient.Do(adminGet(t, e, "/admin/v1/pushes/"+pushID+"/recipients?format=csv&reason=memory"))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		lines := 0
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			lines++
		}
		if err := sc.Err(); err != nil || res.StatusCode != http.StatusOK || lines != n+1 {
			t.Fatalf("download: got %d, %d lines, %v; want 200 with the header and %d lines", res.StatusCode, lines, err, n)
		}
	})
	t.Logf("export of %d tokens: %v, heap %.1f MiB before, peak %.1f MiB (+%.1f MiB)", n, time.Since(began).Round(time.Millisecond),
		mib(base), mib(peak), mib(peak-base))
	if n <= 200_000 { // beyond, the comparison alone would take gigabytes
		loadBase, loadPeak := heapPeak(func() {
			ds, err := e.Store.Deliveries(ctx, pushID)
			if err != nil || len(ds) != n {
				t.Fatalf("Deliveries: got %d, %v", len(ds), err)
			}
			runtime.KeepAlive(ds)
		})
		t.Logf("all %d deliveries in memory at once (Deliveries): peak +%.1f MiB", n, mib(loadPeak-loadBase))
	}
	// The bound: a window's deliveries and the chunks it touches, a span
	// per chunk, the encoders' buffers and the driver's, whatever n is.
	if grew := peak - base; grew > 64<<20 {
		t.Errorf("the export's heap grew %.1f MiB, want at most 64 MiB whatever the push's size", mib(grew))
	}
}

func adminGet(t *testing.T, e *testenv.Env, path string) *http.Request {
	req, err := http.NewRequest(http.MethodGet, e.Admin.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.AdminToken)
	return req
}

// heapPeak runs fn and returns the live heap after a collection before it,
// and the highest heap seen while it ran (sampled every millisecond).
func heapPeak(fn func()) (base, peak uint64) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base, peak = read(), read()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				peak = max(peak, read())
			}
		}
	}()
	fn()
	close(done)
	wg.Wait()
	return base, max(peak, read())
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
