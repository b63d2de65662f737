package api_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"
)

// BenchmarkRegisterPushToken measures POST /api/sdk/v2/push-token over real
// HTTP on real SQLite as `herald bench` registers: each request a new
// device with a new token, mapped to a new user, from 32 clients at once.
// It reports registrations per second; profile it with -cpuprofile to see
// where a registration's CPU goes.
func BenchmarkRegisterPushToken(b *testing.B) {
	env := testenv.New(b, testenv.Options{QuietLog: true})
	app := env.CreateApp(b, nil)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024}}
	b.Cleanup(hc.CloseIdleConnections)
	url := env.API.URL + pushTokenPath
	var next, failed atomic.Int64
	b.SetParallelism(16) // 32 clients on 2 CPUs, as herald bench runs
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			body := fmt.Appendf(nil, `{"deviceId":"d%d","token":"bench-token-%d","platform":"android","appSourceVersion":"1.6.0","userId":"u%d"}`, i, i, i)
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
		b.Fatalf("%d of %d registrations failed, want none", n, b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "reg/s")
}
