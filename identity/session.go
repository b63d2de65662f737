package identity

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
)

// The session cookie holds a random secret; the server keeps each session
// under a hash of it (SessionID), so the stored sessions are no cookies,
// a session works on every node, and signing out ends it everywhere. The
// CSRF token of a session is another hash of its secret. An operator's
// cookie depends on nothing else; the owner's also carries an HMAC of the
// secret keyed with the admin token (OwnerMAC).

// sessionHash is a hash of a session's secret for one purpose.
func sessionHash(purpose, secret string) string {
	h := sha256.Sum256([]byte("herald-" + purpose + "\x00" + secret))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// SessionID is the server's name of a session: a hash of its secret.
func SessionID(secret string) string { return sessionHash("session", secret) }

// CSRFToken is the form token of the session whose cookie holds secret:
// another hash of the secret.
func CSRFToken(secret string) string { return sessionHash("csrf", secret) }

// OwnerMAC binds an owner's session to the admin token: the owner's cookie
// carries it beside the secret, so changing the token signs the owner's
// sessions out.
func (g *Guard) OwnerMAC(secret string) string {
	h := hmac.New(sha256.New, []byte(g.Token))
	h.Write([]byte("herald-owner-session\x00" + secret))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// Where the dashboard's browser comes from (DESIGN 11): when
// HERALD_ADMIN_URL is https, the cookies are Secure and named with the
// __Host- prefix (Path=/, no Domain), so that no other site, nor plain
// http to the same host, can set or read them; over http they stay as
// they were, for a dashboard on loopback. The forms that sign in or set a
// password refuse a foreign Origin header: a page elsewhere cannot post a
// sign-in (login CSRF, signing the browser in as someone else) or guess
// passwords through the visitor's browser.

// hostPrefix and securePrefix are the cookie-name prefixes browsers hold
// to their rules (RFC 6265bis 4.1.3): __Host- needs Secure, Path=/ and no
// Domain; __Secure- needs Secure.
const (
	hostPrefix   = "__Host-"
	securePrefix = "__Secure-"
)

// adminHTTPS reports whether the admin URL (HERALD_ADMIN_URL) is https.
func (g *Guard) adminHTTPS() bool {
	u, err := url.Parse(g.AdminURL)
	return err == nil && u.Scheme == "https"
}

// CookieName is the name of a Path=/ cookie: __Host- prefixed when the
// admin URL is https.
func (g *Guard) CookieName(base string) string {
	if g.adminHTTPS() {
		return hostPrefix + base
	}
	return base
}

// SecureCookies reports whether the cookies of a request's answer are
// Secure: always when the admin URL is https, else when the browser came
// by https (directly or through a trusted proxy that says so).
func (g *Guard) SecureCookies(r *http.Request) bool {
	return g.adminHTTPS() || ViaHTTPS(r, g.TrustProxy)
}

// ForeignOrigin reports whether r comes from another site's page. A
// browser's Sec-Fetch-Site, which no page can set, decides when present:
// the dashboard's pages are sent with Referrer-Policy: no-referrer, under
// which browsers send the Origin of even a same-origin form as "null".
// Without it, r is foreign when it carries an Origin header that is
// neither the admin URL's origin nor the request's own Host's; a request
// without either (not every client sends them) is not.
func (g *Guard) ForeignOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none": // none: the person's own action (typed, bookmarked)
		return false
	case "same-site", "cross-site":
		return true
	}
	origin, ok := r.Header["Origin"]
	if !ok {
		return false
	}
	if len(origin) != 1 {
		return true
	}
	if a, err := url.Parse(g.AdminURL); err == nil && a.Host != "" && asciiFold(origin[0], a.Scheme+"://"+a.Host) {
		return false
	}
	o, err := url.Parse(origin[0])
	if err != nil || o.Scheme != "http" && o.Scheme != "https" || o.Host == "" || o.Path != "" || o.RawQuery != "" || o.User != nil {
		return true // "null", or no origin at all
	}
	return !asciiFold(o.Host, r.Host)
}

// asciiFold compares a and b with ASCII letters lowered and nothing else
// (strings.EqualFold would take the Kelvin sign for a k).
func asciiFold(a, b string) bool { return EmailKey(a) == EmailKey(b) }

// SecureCookieName is the name of a cookie whose Path is not /:
// __Secure- prefixed when the admin URL is https (__Host- needs Path=/).
func (g *Guard) SecureCookieName(base string) string {
	if g.adminHTTPS() {
		return securePrefix + base
	}
	return base
}
