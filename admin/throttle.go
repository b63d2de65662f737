package admin

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Failed sign-ins: a client address may fail signInBurst times at once,
// then once per signInEvery. While it may not, every sign-in from it is
// refused, the right token too, so guessing gains nothing from going on.
const (
	signInBurst   = 5
	signInEvery   = 10 * time.Second
	maxThrottled  = 100_000
	throttleSweep = time.Minute
)

// signInThrottle counts failed sign-ins per client address.
type signInThrottle struct {
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
	swept   time.Time
}

func newSignInThrottle() *signInThrottle {
	return &signInThrottle{buckets: map[string]*rate.Limiter{}}
}

// wait reports how long the address must wait before it may sign in again;
// 0 when it may now.
func (t *signInThrottle) wait(addr string, now time.Time) time.Duration {
	t.mu.Lock()
	b, ok := t.buckets[addr]
	t.mu.Unlock()
	if !ok {
		return 0
	}
	tokens := b.TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) * float64(signInEvery))
}

// failed records a failed sign-in from the address.
func (t *signInThrottle) failed(addr string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweep(now)
	b, ok := t.buckets[addr]
	if !ok {
		if len(t.buckets) >= maxThrottled {
			return // a flood from that many addresses at once: new ones go uncounted until the sweep
		}
		b = rate.NewLimiter(rate.Every(signInEvery), signInBurst)
		t.buckets[addr] = b
	}
	b.AllowN(now, 1)
}

// sweep forgets addresses whose bucket has filled up again: forgetting
// them loses nothing.
func (t *signInThrottle) sweep(now time.Time) {
	if now.Sub(t.swept) < throttleSweep {
		return
	}
	t.swept = now
	for k, b := range t.buckets {
		if b.TokensAt(now) >= signInBurst {
			delete(t.buckets, k)
		}
	}
}

// clientAddr is the address a request comes from: the connection's, or
// with trustProxy the last address of X-Forwarded-For (the one the proxy
// added). An IPv6 client counts as its /64.
func clientAddr(r *http.Request, trustProxy bool) string {
	host := r.RemoteAddr
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if xff := r.Header.Get("X-Forwarded-For"); trustProxy && xff != "" {
		parts := strings.Split(xff, ",")
		host = strings.TrimSpace(parts[len(parts)-1])
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	if ip.Is6() && !ip.Is4In6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.Unmap().String()
}

// viaHTTPS reports whether the browser reached the dashboard over HTTPS:
// directly, or through a trusted proxy that says so.
func viaHTTPS(r *http.Request, trustProxy bool) bool {
	if r.TLS != nil {
		return true
	}
	if !trustProxy {
		return false
	}
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	return strings.EqualFold(strings.TrimSpace(proto), "https")
}
