package sqlite_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// BenchmarkStartSending measures the fan-out's write alone (no HTTP, no
// sends): each op records a 500-user push's one chunk of slots, one
// device per user, as herald bench --mode users makes them. It reports
// the CPU time per 1,000 deliveries (the process's, which is the
// benchmark's own), for the cost of what the fan-out writes per
// recipient (user_pushes).
func BenchmarkStartSending(b *testing.B) {
	ctx := context.Background()
	db, app := benchStore(b, true)
	now := benchNow
	const users = 500
	b.ReportAllocs()
	var accept time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		p := herald.Push{ID: herald.NewID("push_", now.Add(time.Duration(i)*time.Millisecond)), AppID: app.ID, Kind: herald.KindUsers,
			Status: herald.StatusSending, Content: herald.Content{Title: "t", Content: "c"}, CreatedAt: now}
		if _, _, err := db.AcceptPush(ctx, p, nil, nil, benchJob{}); err != nil {
			b.Fatal(err)
		}
		accept += time.Since(t0)
		ds := make([]herald.Delivery, users)
		for j := range ds {
			n := strconv.Itoa(i*users + j)
			ds[j] = herald.Delivery{Seq: j, RecipientIdx: j, UserID: "user-" + n, DeviceID: "d" + n, Token: "bench-token-" + n,
				Platform: herald.PlatformAndroid, AppSourceVersion: "1.6.0", State: herald.DeliveryPending, TokenUpdatedAt: now}
		}
		if ok, err := db.StartSending(ctx, p.ID, sendstore.Fanout{Deliveries: ds, Jobs: []herald.Job{benchJob{}}}); err != nil || !ok {
			b.Fatalf("StartSending: (%v, %v)", ok, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed()-accept)/float64(b.N*users)/1e3, "µs/delivery")
}

// BenchmarkDevicesOfUsers measures the fan-out's read of a 500-user
// push's devices (one each, mapped to its user) among 20,000: the read a
// users push makes per page, reported per device.
func BenchmarkDevicesOfUsers(b *testing.B) {
	ctx := context.Background()
	db, app := benchStore(b, false)
	const devices, users = 20000, 500
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Go(func() {
			for i := w; i < devices; i += 32 {
				n := strconv.Itoa(i)
				user := "user-" + n
				if _, err := db.RegisterDevice(ctx, app.ID, herald.DeviceRegistration{DeviceID: "d" + n, Token: "bench-token-" + n,
					Platform: herald.PlatformAndroid, AppSourceVersion: "1.6.0", UserID: &user}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		ids := make([]string, users)
		for j := range ids {
			ids[j] = "user-" + strconv.Itoa((i*7919+j*37)%devices)
		}
		got, err := db.DevicesOfUsers(ctx, app.ID, ids)
		if err != nil || len(got) != users {
			b.Fatalf("DevicesOfUsers: %d users, %v", len(got), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed())/float64(b.N*users)/1e3, "µs/device")
}
