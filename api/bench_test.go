package api_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"
)

// BenchmarkPatchMarketing measures PATCH /api/app-user/v2/marketing over
// real HTTP on real SQLite: every request authenticates, reads the user and
// writes the user and its two devices in one transaction. It reports
// requests per second and the p50/p99 latency seen by the client.
func BenchmarkPatchMarketing(b *testing.B) {
	env := testenv.New(b, testenv.Options{QuietLog: true})
	app := env.BusinessApp(b)
	const users = 1000
	for i := range users {
		u := "user-" + strconv.Itoa(i)
		env.RegisterToken(b, app, u+"-a", u+"-tok-a", u)
		env.RegisterToken(b, app, u+"-b", u+"-tok-b", u)
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024}}
	b.Cleanup(hc.CloseIdleConnections)
	url := env.API.URL + marketingPath
	bodies := make([][]byte, 0, 2*users)
	for i := range users {
		for _, state := range []string{`{"marketing":true,"marketingNight":true}`, `{"marketing":false}`} {
			bodies = append(bodies, fmt.Appendf(nil, `{"userId":"user-%d","state":%s}`, i, state))
		}
	}

	var (
		mu        sync.Mutex
		latencies []time.Duration
		next      atomic.Int64
		failed    atomic.Int64
	)
	// Several clients per CPU, as a server sees them: requests wait on the
	// single SQLite writer, not on the client.
	b.SetParallelism(8)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		local := make([]time.Duration, 0, 1024)
		for pb.Next() {
			body := bodies[next.Add(1)%int64(len(bodies))]
			t0 := time.Now()
			ok := benchCall(hc, http.MethodPatch, url, body, "x-api-key", app.APIKey, "x-secret-key", app.SecretKey)
			local = append(local, time.Since(t0))
			if !ok {
				failed.Add(1)
			}
		}
		mu.Lock()
		latencies = append(latencies, local...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d requests failed, want none", n, b.N)
	}
	if len(latencies) == 0 {
		return
	}
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// BenchmarkPushMessagesAccept measures what accepting a 200-message
// request costs the Server API itself (reading, checking and decoding the
// body), the store a fake.
func BenchmarkPushMessagesAccept(b *testing.B) {
	benchAccept(b, "/api/push/v2/messages", `{"messages":[`, 200,
		`{"userId":"user-%[1]d","title":"Hello user %[1]d","content":"Your order %[1]d has shipped and is on its way."}`)
}

// BenchmarkPushUsersAccept measures the same for a 500-user request.
func BenchmarkPushUsersAccept(b *testing.B) {
	benchAccept(b, "/api/push/v2/users", `{"title":"Herald bench","content":"One message to every registered user.","userIds":[`, 500,
		`"bench-user-%d"`)
}

// benchAccept accepts, on a fake store, the body that opens with head and
// lists n items, item formatted with each one's index.
func benchAccept(b *testing.B, path, head string, n int, item string) {
	a := newFakeAPI()
	var body bytes.Buffer
	body.WriteString(head)
	for i := range n {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, item, i)
	}
	body.WriteString(`]}`)
	b.ReportAllocs()
	for b.Loop() {
		if res := a.do("POST", path, body.String()); res.Status != http.StatusOK {
			b.Fatalf("got %d %s", res.Status, res.Body)
		}
		a.take()
	}
}

// benchCall sends one JSON request of a benchmark with headers (name,
// value, …) and reports whether it was answered 200.
func benchCall(hc *http.Client, method, url string, body []byte, headers ...string) bool {
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
