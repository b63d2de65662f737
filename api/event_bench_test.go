package api_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/bench"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/sendstore"
)

// benchFanout is the fan-out job of the benchmark's push (never run).
type benchFanout struct{}

func (benchFanout) Kind() string { return "bench.fanout" }

// BenchmarkReportEvents measures POST /api/sdk/v2/events over real HTTP on
// real SQLite as `herald bench --open-rate 1` reports: each device of a
// 20,000-device push reports received and opened in one request, from 64
// clients at once, after its send was recorded sent ("sent") or while it
// is still in flight ("inflight": marked, not settled, so each event is
// judged in its transaction and kept pending). Past the push's devices
// the reports are repeats, ignored. The clients run in a process of their
// own (TestEventsLoad), so this process's CPU per request (cpu-us/req) is
// the server's. It reports that and events per second; profile it with
// -cpuprofile to see where an event's CPU goes.
func BenchmarkReportEvents(b *testing.B) {
	for _, mode := range []string{"sent", "inflight"} {
		b.Run(mode, func(b *testing.B) { benchReportEvents(b, mode == "sent") })
	}
}

func benchReportEvents(b *testing.B, settle bool) {
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
	const devices, chunk = 20000, 500
	ds := make([]herald.Delivery, devices)
	for i := range ds {
		n := strconv.Itoa(i)
		ds[i] = herald.Delivery{Seq: i, DeviceID: "d" + n, Token: "bench-token-" + n, Platform: herald.PlatformAndroid,
			AppSourceVersion: "1.6.0", Chunk: i / chunk, State: herald.DeliveryPending, TokenUpdatedAt: now}
	}
	if ok, err := env.DB.StartSending(ctx, p.ID, sendstore.Fanout{Deliveries: ds}); err != nil || !ok {
		b.Fatalf("StartSending: (%v, %v)", ok, err)
	}
	// Every send marked in flight, then (sent) recorded sent.
	for c := range devices / chunk {
		steps := []sendstore.ChunkStep{{Chunk: c, New: sendstore.Range{Marked: chunk}}}
		if settle {
			steps = append(steps, sendstore.ChunkStep{Chunk: c, Old: sendstore.Range{Marked: chunk},
				New: sendstore.Range{Settled: chunk, Marked: chunk}})
		}
		for _, st := range steps {
			if _, _, err := env.DB.AdvanceChunk(ctx, app.ID, p.ID, st); err != nil {
				b.Fatalf("AdvanceChunk: %v", err)
			}
		}
	}
	// The clients run in a process of their own, so that this process's
	// CPU is the server's alone.
	cmd := exec.Command(os.Args[0], "-test.run=^TestEventsLoad$", "-test.count=1")
	cmd.Env = append(os.Environ(), envEventsLoad+"="+strings.Join([]string{
		env.API.URL + eventsPath, app.APIKey, p.ID, strconv.Itoa(b.N), strconv.Itoa(devices)}, " "))
	b.ReportAllocs()
	cpu0 := benchCPU(b)
	b.ResetTimer()
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("clients: %v\n%s", err, out)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(2*b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric((benchCPU(b)-cpu0)*1e6/float64(b.N), "cpu-us/req")
	if settle { // every device reported was counted once, and no other
		got, err := env.Store.Push(ctx, p.ID)
		if want := min(b.N, devices); err != nil || got.Counts.Received != want || got.Counts.Opened != want {
			b.Fatalf("counts: got %+v (%v), want received and opened %d", got.Counts, err, want)
		}
	}
}

// envEventsLoad, set, makes TestEventsLoad the clients of
// BenchmarkReportEvents: the events URL, API key, push id, reports to make
// and devices, separated by spaces.
const envEventsLoad = "HERALD_EVENTS_LOAD"

// TestEventsLoad is BenchmarkReportEvents's clients, in a process of their
// own (skipped unless envEventsLoad is set): 64 at once, each device in
// turn reporting received and opened in one request. It fails when any
// report is not answered 200.
func TestEventsLoad(t *testing.T) {
	args := strings.Fields(os.Getenv(envEventsLoad))
	if len(args) != 5 {
		t.Skip("BenchmarkReportEvents's clients: set " + envEventsLoad)
	}
	url, apiKey, pushID := args[0], args[1], args[2]
	n, _ := strconv.ParseInt(args[3], 10, 64)
	devices, _ := strconv.ParseInt(args[4], 10, 64)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024}}
	defer hc.CloseIdleConnections()
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < n; i = next.Add(1) - 1 {
				body := fmt.Appendf(nil, `{"deviceId":"d%d","events":[{"pushId":%q,"type":"received"},{"pushId":%q,"type":"opened"}]}`,
					i%devices, pushID, pushID)
				if !benchCall(hc, http.MethodPost, url, body, "x-api-key", apiKey) {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		t.Fatalf("%d of %d reports failed, want none", f, n)
	}
}

// benchCPU is this process's CPU seconds so far.
func benchCPU(b *testing.B) float64 {
	u, err := bench.ReadProcessUsage("self")
	if err != nil {
		b.Fatal(err)
	}
	return u.CPUSeconds
}
