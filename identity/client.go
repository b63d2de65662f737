package identity

import (
	"net/http"
	"net/netip"
	"strings"

	"github.com/heraldpush/herald/access"
)

// ClientAddr is the address attempts are counted under: the client's, as
// its access record keeps it (access.ClientIP: the connection's, or with
// trustProxy the last address of X-Forwarded-For, the one the proxy
// added), an IPv6 client as its /64, since one host holds many of those.
func ClientAddr(r *http.Request, trustProxy bool) string {
	host := access.ClientIP(r, trustProxy)
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.Is6() {
		return host
	}
	p, _ := ip.Prefix(64)
	return p.String()
}

// ViaHTTPS reports whether the browser reached the dashboard over HTTPS:
// directly, or through a trusted proxy that says so.
func ViaHTTPS(r *http.Request, trustProxy bool) bool {
	if r.TLS != nil {
		return true
	}
	if !trustProxy {
		return false
	}
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	return strings.EqualFold(strings.TrimSpace(proto), "https")
}
