package api_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/sendstore"
)

// benchFanout is the fan-out job of the benchmark's push (never run).
type benchFanout struct{}

func (benchFanout) Kind() string { return "bench.fanout" }

// BenchmarkReportEvents measures POST /api/sdk/v2/events over real HTTP on
// real SQLite as `herald bench --open-rate 1` reports: each device of a
// 20,000-device push reports received and opened in one request, from 64
// clients at once. It reports events per second; profile it with
// -cpuprofile to see where an event's CPU goes.
func BenchmarkReportEvents(b *testing.B) {
	env := testenv.New(b, testenv.Options{QuietLog: true})
	app := env.CreateApp(b, nil)
	ctx := context.Background()
	q, err := river.NewClient(riversqlite.New(env.DB.Writer), &river.Config{})
	if err != nil {
		b.Fatal(err)
	}
	env.DB.Queue = q
	now := time.Now()
	p := herald.Push{ID: herald.NewID("push_", now), AppID: app.ID, Kind: herald.KindAll, Status: herald.StatusSending,
		Content: herald.Content{Title: "t", Content: "c"}, CreatedAt: now}
	if _, _, err := env.DB.AcceptPush(ctx, p, nil, nil, benchFanout{}); err != nil {
		b.Fatal(err)
	}
	const devices = 20000
	ds := make([]herald.Delivery, devices)
	for i := range ds {
		n := strconv.Itoa(i)
		ds[i] = herald.Delivery{Seq: i, DeviceID: "d" + n, Token: "bench-token-" + n, Platform: herald.PlatformAndroid,
			AppSourceVersion: "1.6.0", Chunk: i / 500, State: herald.DeliveryPending, TokenUpdatedAt: now}
	}
	if ok, err := env.DB.StartSending(ctx, p.ID, sendstore.Fanout{Deliveries: ds}); err != nil || !ok {
		b.Fatalf("StartSending: (%v, %v)", ok, err)
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024}}
	b.Cleanup(hc.CloseIdleConnections)
	url := env.API.URL + eventsPath
	var next, failed atomic.Int64
	b.SetParallelism(32) // 64 clients on 2 CPUs, as herald bench reports
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1) % devices
			body := fmt.Appendf(nil, `{"deviceId":"d%d","events":[{"pushId":%q,"type":"received"},{"pushId":%q,"type":"opened"}]}`, i, p.ID, p.ID)
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("x-api-key", app.APIKey)
			resp, err := hc.Do(req)
			if err != nil {
				failed.Add(1)
				continue
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				failed.Add(1)
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d reports failed, want none", n, b.N)
	}
	b.ReportMetric(float64(2*b.N)/elapsed.Seconds(), "events/s")
}
