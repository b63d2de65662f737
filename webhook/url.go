package webhook

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// MaxURLLength is the longest webhook URL accepted, in bytes.
const MaxURLLength = 2048

// ErrPrivateAddress reports a webhook host that is not a public internet
// address; it is refused unless private addresses are allowed.
var ErrPrivateAddress = errors.New("host must be a public internet address")

// ValidateURL reports why raw cannot be used as a webhook URL, or nil. The
// URL must be absolute with a host and no user information, at most
// MaxURLLength bytes, and https; when allowPrivate is true (tests, local
// use) http is accepted too. When allowPrivate is false a host written as an
// IP literal, or "localhost", must be a public address; host names are
// checked again after DNS resolution by Sender. Error messages are short
// sentences suited to an API error's details reason.
func ValidateURL(raw string, allowPrivate bool) error {
	if len(raw) > MaxURLLength {
		return fmt.Errorf("must be at most %d characters", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return errors.New("must be an absolute URL")
	}
	if err := checkScheme(u.Scheme, allowPrivate); err != nil {
		return err
	}
	if u.User != nil {
		return errors.New("must not contain user information")
	}
	host := u.Hostname()
	if host == "" {
		return errors.New("must contain a host")
	}
	if allowPrivate {
		return nil
	}
	return checkHost(host)
}

// checkScheme accepts https, and http only when private targets are allowed.
func checkScheme(scheme string, allowPrivate bool) error {
	switch {
	case scheme == "https":
		return nil
	case scheme == "http" && allowPrivate:
		return nil
	case allowPrivate:
		return errors.New("scheme must be http or https")
	default:
		return errors.New("scheme must be https")
	}
}

// checkHost refuses localhost names and non-public IP literals.
func checkHost(host string) error {
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return ErrPrivateAddress
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return nil // a DNS name: Sender checks the resolved address
	}
	if !IsPublicAddr(addr) {
		return ErrPrivateAddress
	}
	return nil
}

// IsPublicAddr reports whether addr is a public unicast internet address. It
// refuses loopback, private (RFC 1918, fc00::/7), link-local, unspecified,
// multicast, shared (CGNAT 100.64.0.0/10) and other special-purpose ranges,
// also when written in an IPv4-mapped IPv6 form.
func IsPublicAddr(addr netip.Addr) bool {
	addr = addr.Unmap().WithZone("")
	if !addr.IsValid() || !addr.IsGlobalUnicast() || addr.IsPrivate() ||
		addr.IsLoopback() || addr.IsLinkLocalUnicast() || addr.IsUnspecified() ||
		addr.IsMulticast() || addr.IsInterfaceLocalMulticast() {
		return false
	}
	for _, p := range specialPrefixes() {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}

// specialPrefixes lists the ranges that IsGlobalUnicast accepts but that
// must not be reachable from a webhook: they lead into the operator's own
// network or translate to such addresses.
func specialPrefixes() []netip.Prefix {
	return []netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/8"),      // "this network"
		netip.MustParsePrefix("100.64.0.0/10"),  // shared address space (CGNAT)
		netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
		netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
		netip.MustParsePrefix("240.0.0.0/4"),    // reserved, broadcast
		netip.MustParsePrefix("::/96"),          // IPv4-compatible (deprecated)
		netip.MustParsePrefix("64:ff9b::/96"),   // NAT64 to any IPv4
		netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
		netip.MustParsePrefix("100::/64"),       // discard-only
		netip.MustParsePrefix("2001:db8::/32"),  // documentation
		netip.MustParsePrefix("2002::/16"),      // 6to4 wraps any IPv4
		netip.MustParsePrefix("2001::/32"),      // Teredo wraps any IPv4
	}
}
