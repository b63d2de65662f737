package sqlite_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

// BenchmarkRegisterDevice measures the store's registrations alone (no
// HTTP): each a new device with a new token mapped to a new user, as
// herald bench registers, from one caller (Serial: a commit each) or 32 at
// once (Concurrent: they share commits).
func BenchmarkRegisterDevice(b *testing.B) {
	for _, bc := range []struct {
		name    string
		callers int
	}{{"Serial", 1}, {"Concurrent", 32}} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			db, app := benchStore(b, false)
			var next, failed atomic.Int64
			b.SetParallelism((bc.callers + 1) / 2) // GOMAXPROCS 2 on this machine
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := strconv.FormatInt(next.Add(1), 10)
					user := "u" + i
					_, err := db.RegisterDevice(ctx, app.ID, herald.DeviceRegistration{
						DeviceID: "d" + i, Token: "bench-token-" + i, Platform: herald.PlatformAndroid, AppSourceVersion: "1.6.0", UserID: &user,
					})
					if err != nil {
						failed.Add(1)
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "reg/s")
			if n := failed.Load(); n > 0 {
				b.Fatalf("%d of %d registrations failed, want none", n, b.N)
			}
		})
	}
}
