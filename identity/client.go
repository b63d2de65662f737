package identity

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ClientAddr is the address a request comes from: the connection's, or
// with trustProxy the last address of X-Forwarded-For (the one the proxy
// added). An IPv6 client counts as its /64.
func ClientAddr(r *http.Request, trustProxy bool) string {
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
