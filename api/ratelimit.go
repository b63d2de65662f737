package api

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limiter holds one token bucket per app. Limits are per node (DESIGN.md
// section 2 allows it): behind N nodes an app gets up to N times the rate.
type limiter struct {
	perSecond rate.Limit
	burst     int
	mu        sync.Mutex
	buckets   map[string]*rate.Limiter
}

// newLimiter returns nil (no limit) for a rate of zero or less.
func newLimiter(perSecond float64) *limiter {
	if perSecond <= 0 {
		return nil
	}
	return &limiter{perSecond: rate.Limit(perSecond), burst: int(math.Max(1, 2*perSecond)), buckets: map[string]*rate.Limiter{}}
}

// allow takes a token from the app's bucket; when there is none it returns
// how long until there is.
func (l *limiter) allow(appID string, now time.Time) (bool, time.Duration) {
	if l == nil {
		return true, 0
	}
	l.mu.Lock()
	b, ok := l.buckets[appID]
	if !ok {
		b = rate.NewLimiter(l.perSecond, l.burst)
		l.buckets[appID] = b
	}
	l.mu.Unlock()
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// retryAfter formats a wait as whole seconds for the Retry-After header.
func retryAfter(w http.ResponseWriter, d time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(d.Seconds()))))
}
