package api

import (
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// maxBuckets bounds one limiter's memory (about 200 bytes a bucket) when
// more keys than that are active at once, e.g. a flood from many addresses.
const maxBuckets = 100_000

// limiter holds one token bucket per key: an app, or a client address.
// Limits are per node (DESIGN.md section 2 allows it): behind N nodes a key
// gets up to N times the rate.
type limiter struct {
	perSecond rate.Limit
	burst     int
	// idle is how long a bucket takes to fill up from empty. A bucket
	// unused that long is a new bucket again, so forgetting it loses
	// nothing.
	idle    time.Duration
	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	tokens *rate.Limiter
	used   time.Time
}

// newLimiter returns nil (no limit) for a rate of zero or less; bursts are
// twice the rate.
func newLimiter(perSecond float64) *limiter {
	if perSecond <= 0 {
		return nil
	}
	burst := math.Max(1, 2*perSecond)
	return &limiter{
		perSecond: rate.Limit(perSecond), burst: int(burst),
		idle:    time.Duration(math.Ceil(burst/perSecond*float64(time.Second))) + time.Second,
		buckets: map[string]*bucket{},
	}
}

// allow takes a token from key's bucket; when there is none it returns
// how long until there is.
func (l *limiter) allow(key string, now time.Time) (bool, time.Duration) {
	if l == nil {
		return true, 0
	}
	b := l.bucket(key, now)
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// empty reports, without taking a token, whether key's bucket is empty,
// and how long until it is not.
func (l *limiter) empty(key string, now time.Time) (bool, time.Duration) {
	if l == nil {
		return false, 0
	}
	l.mu.Lock()
	b, ok := l.buckets[key]
	l.mu.Unlock()
	if !ok {
		return false, 0
	}
	if t := b.tokens.TokensAt(now); t < 1 {
		return true, time.Duration((1 - t) / float64(l.perSecond) * float64(time.Second))
	}
	return false, 0
}

// bucket returns key's bucket, making it when absent, after forgetting
// idle ones at most once per idle period.
func (l *limiter) bucket(key string, now time.Time) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) >= l.idle {
		l.sweep(now)
	}
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= maxBuckets {
			l.evictOne()
		}
		b = &bucket{tokens: rate.NewLimiter(l.perSecond, l.burst)}
		l.buckets[key] = b
	}
	b.used = now
	return b.tokens
}

// sweep forgets buckets unused for the idle period.
func (l *limiter) sweep(now time.Time) {
	for k, b := range l.buckets {
		if now.Sub(b.used) >= l.idle {
			delete(l.buckets, k)
		}
	}
	l.swept = now
}

// evictOne forgets one bucket (the map's order is random), so that a
// flood of new keys cannot grow the map without bound.
func (l *limiter) evictOne() {
	for k := range l.buckets {
		delete(l.buckets, k)
		return
	}
}

// size is the number of buckets held.
func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// clientAddr is the key of the request's client: the host of the
// connection's remote address (proxy headers are not trusted), an IPv6
// client's whole /64, since one host commonly holds one.
func clientAddr(r *http.Request) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	a := ap.Addr().Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// retryAfter formats a wait as whole seconds for the Retry-After header.
func retryAfter(w http.ResponseWriter, d time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(d.Seconds()))))
}
