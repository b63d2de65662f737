package sqlite_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/bench"
	"github.com/heraldpush/herald/sendstore"
)

// benchJob is the fan-out job of the benchmark's push (never run).
type benchJob struct{}

func (benchJob) Kind() string { return "bench.fanout" }

// BenchmarkRecordEvents measures the store's event reports alone (no
// HTTP), as herald bench --open-rate 1 makes them: each device of a
// 20,000-device push reports received and opened in one call, 64 callers
// at once (they share commits). It reports events per second and this
// process's CPU per call (cpu-us/op).
func BenchmarkRecordEvents(b *testing.B) {
	ctx := context.Background()
	db, app := benchStore(b, true)
	now := benchNow
	const devices = 20000
	p := herald.Push{ID: herald.NewID("push_", now), AppID: app.ID, Kind: herald.KindAll, Status: herald.StatusSending,
		Content: herald.Content{Title: "t", Content: "c"}, CreatedAt: now}
	if _, _, err := db.AcceptPush(ctx, p, nil, nil, benchJob{}); err != nil {
		b.Fatal(err)
	}
	ds := make([]herald.Delivery, devices)
	for i := range ds {
		n := strconv.Itoa(i)
		ds[i] = herald.Delivery{Seq: i, DeviceID: "d" + n, Token: "bench-token-" + n, Platform: herald.PlatformAndroid,
			AppSourceVersion: "1.6.0", Chunk: i / 500, State: herald.DeliveryPending, TokenUpdatedAt: now}
	}
	if ok, err := db.StartSending(ctx, p.ID, sendstore.Fanout{Deliveries: ds}); err != nil || !ok {
		b.Fatalf("StartSending: (%v, %v)", ok, err)
	}
	// Every send recorded sent: events count only for devices sent the push.
	for chunk := range devices / 500 {
		for _, st := range []sendstore.ChunkStep{
			{Chunk: chunk, New: sendstore.Range{Marked: 500}},
			{Chunk: chunk, Old: sendstore.Range{Marked: 500}, New: sendstore.Range{Settled: 500, Marked: 500}},
		} {
			if _, _, err := db.AdvanceChunk(ctx, app.ID, p.ID, st); err != nil {
				b.Fatalf("AdvanceChunk: %v", err)
			}
		}
	}
	marks := []herald.EventMark{{PushID: p.ID, Type: herald.EventReceived, At: now}, {PushID: p.ID, Type: herald.EventOpened, At: now}}
	var next, failed atomic.Int64
	b.SetParallelism(32)
	b.ReportAllocs()
	cpu0 := processCPU(b)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			// Past the push's devices the reports are repeats: ignored,
			// still written (and found there).
			i := next.Add(1) % devices
			got, err := db.RecordEvents(ctx, app.ID, "d"+strconv.FormatInt(i, 10), marks)
			if err != nil || len(got) != 2 {
				failed.Add(1)
			}
		}
	})
	b.ReportMetric(float64(2*b.N)/time.Since(start).Seconds(), "events/s")
	b.ReportMetric((processCPU(b)-cpu0)*1e6/float64(b.N), "cpu-us/op")
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d reports failed, want none", n, b.N)
	}
}

// processCPU is this process's CPU seconds so far.
func processCPU(b *testing.B) float64 {
	u, err := bench.ReadProcessUsage("self")
	if err != nil {
		b.Fatal(err)
	}
	return u.CPUSeconds
}
