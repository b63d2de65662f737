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

// Failed sign-ins are counted in the database, so every node shares them
// (DESIGN 11): under the client's address and under the email typed (known
// or not), and for the owner's token under the address alone. A key that
// failed signInLimit times within signInWindow is refused until its
// oldest failure leaves the window, the right password or token too, so
// guessing gains nothing from going on. The owner's token is counted apart
// from passwords: a stranger who makes an address or an email wait does
// not lock the owner out.
const (
	signInLimit  = 20
	signInWindow = 15 * time.Minute
	// maxTypedEmail bounds a typed email as a key: longer is no address.
	maxTypedEmail = 320
)

// Keys of the failure counts.
func addrKey(addr string) string  { return "addr:" + addr }
func ownerKey(addr string) string { return "owner:" + addr }
func emailKey(email string) string {
	email = strings.ToLower(strings.TrimSpace(email))
	if len(email) > maxTypedEmail {
		email = email[:maxTypedEmail]
	}
	return "email:" + email
}

// throttled returns how long until every key may try again: 0 when all
// may now.
func (d *dashboard) throttled(ctx context.Context, keys ...string) (time.Duration, error) {
	now := d.Now()
	var wait time.Duration
	for _, k := range keys {
		n, oldest, err := d.Store.SignInFailures(ctx, k, now.Add(-signInWindow))
		if err != nil {
			return 0, err
		}
		if n >= signInLimit {
			wait = max(wait, oldest.Add(signInWindow).Sub(now))
		}
	}
	return wait, nil
}

// failed records a failed sign-in under the keys. A failure to record it
// is logged: the sign-in is refused anyway.
func (d *dashboard) failed(ctx context.Context, keys ...string) {
	now := d.Now()
	if err := d.Store.SignInFailed(ctx, keys, now, now.Add(-signInWindow)); err != nil {
		d.Logger.ErrorContext(ctx, "record failed sign-in", "err", err)
	}
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
