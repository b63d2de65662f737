package admin

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald"
)

// Attempts at a credential are counted in the database before they are
// judged (herald.AttemptStore), so every node shares the count and a burst
// gets no more than the limit judged: a sign-in under the client's
// address and the email typed (known or not), the owner's token pasted on
// the sign-in page under the address alone, a refused bearer token of the
// admin API under its address. An attempt that succeeds is forgiven.
// Refused attempts (and every refused bearer token) leave no record each:
// their count becomes one record per key and window (recordAttempts).

// countSignIn counts a sign-in attempt under keys; free is
// herald.AttemptLimit, as a sign-in's own record covers each attempt that
// is judged.
func (s *server) countSignIn(ctx context.Context, keys ...string) (herald.Attempt, error) {
	return s.Store.CountAttempt(ctx, keys, herald.AttemptLimit, s.Now())
}

// forgive takes back an attempt that succeeded. A failure to is logged:
// the attempt then counts as a failure, which only the limit notices.
func (s *server) forgive(ctx context.Context, a herald.Attempt) {
	if err := s.Store.Forgive(ctx, a); err != nil {
		s.Logger.ErrorContext(ctx, "forgive a sign-in attempt", "err", err)
	}
	s.records.RecordPendingDue(ctx)
}

// tooMany answers a throttled sign-in: 429 with Retry-After, on page v.
func (d *dashboard) tooMany(w http.ResponseWriter, r *http.Request, wait time.Duration, page string, v view) {
	secs := max(int(wait.Round(time.Second).Seconds()), 1)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	v.Problem = &problem{Code: herald.ErrTooManyRequests.Code,
		Message: fmt.Sprintf("Too many failed sign-ins from your address or for this email. Try again in %s.", (time.Duration(secs) * time.Second).String())}
	d.render(w, r, http.StatusTooManyRequests, page, v)
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
