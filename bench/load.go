package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
)

// userOf, deviceOf and tokenOf name user i's identifiers.
func userOf(i int) string   { return "u" + strconv.Itoa(i) }
func deviceOf(i int) string { return "d" + strconv.Itoa(i) }
func tokenOf(i int) string  { return "bench-token-" + strconv.Itoa(i) }

// register maps every user to one device with one token through the SDK
// API, user i through node i mod len(nodes); the devices' locales are
// Korean, Japanese and American English in turn.
func register(ctx context.Context, nodes []*client.Client, users, workers int) (Register, error) {
	start := time.Now()
	err := forEach(ctx, users, workers, func(ctx context.Context, i int) error {
		_, err := nodes[i%len(nodes)].RegisterPushToken(ctx, client.RegisterRequest{
			DeviceID: deviceOf(i), Token: tokenOf(i), Platform: "android", AppSourceVersion: "1.6.0", UserID: userOf(i),
			Locale: localeOf(i),
		})
		if err != nil {
			return fmt.Errorf("bench: register user %d: %w", i, err)
		}
		return nil
	})
	elapsed := time.Since(start)
	return Register{Workers: workers, Seconds: elapsed.Seconds(), PerSecond: float64(users) / elapsed.Seconds()}, err
}

// summarize computes the accept figures of the push requests.
func summarize(latencies []time.Duration, workers int) Accept {
	sorted := slices.Clone(latencies)
	slices.Sort(sorted)
	return Accept{
		Requests: len(sorted), Workers: workers,
		P50MS: ms(percentile(sorted, 0.50)), P99MS: ms(percentile(sorted, 0.99)), MaxMS: ms(percentile(sorted, 1)),
	}
}

// percentile returns the nearest-rank q-quantile of sorted (0 when empty).
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(q*float64(len(sorted)) + 0.999999)
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// pollInterval is how often the emulator's counters are read; it bounds the
// error on the time of the last message.
const pollInterval = 10 * time.Millisecond

// awaitDeliveries polls the emulator, which had accepted before messages,
// until it has accepted want more or the deadline passes, and rates those
// deliveries from start.
func awaitDeliveries(ctx context.Context, emu *emulator.Emulator, before, want int, start time.Time, deadline time.Duration, progress io.Writer) (Delivery, error) {
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	lastReport := time.Now()
	for {
		st := emu.Stats()
		st.Accepted -= before
		now := time.Now()
		d := Delivery{Delivered: st.Accepted, Rejected: st.Rejected, Seconds: now.Sub(start).Seconds()}
		d.PerSecond = float64(d.Delivered) / d.Seconds
		if st.Accepted >= want {
			return d, nil
		}
		if now.Sub(lastReport) >= 5*time.Second {
			fmt.Fprintf(progress, "bench: %d/%d messages at the emulator after %.1fs\n", st.Accepted, want, d.Seconds)
			lastReport = now
		}
		select {
		case <-ctx.Done():
			return d, fmt.Errorf("bench: the emulator has %d of %d messages (%d rejected) after %.1fs: %w",
				st.Accepted, want, st.Rejected, d.Seconds, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// forEach calls fn for every index below n on at most workers goroutines.
// The first error stops the others from taking new indexes and is returned.
func forEach(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(ctx, i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}
