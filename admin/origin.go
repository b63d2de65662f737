package admin

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/heraldpush/herald"
)

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
func (s *server) adminHTTPS() bool {
	u, err := url.Parse(s.AdminURL)
	return err == nil && u.Scheme == "https"
}

// cookieName is the name of a Path=/ cookie: __Host- prefixed when the
// admin URL is https.
func (s *server) cookieName(base string) string {
	if s.adminHTTPS() {
		return hostPrefix + base
	}
	return base
}

// secureCookies reports whether the cookies of a request's answer are
// Secure: always when the admin URL is https, else when the browser came
// by https (directly or through a trusted proxy that says so).
func (s *server) secureCookies(r *http.Request) bool {
	return s.adminHTTPS() || viaHTTPS(r, s.TrustProxy)
}

// foreignOrigin reports whether r carries an Origin header that is
// neither the admin URL's origin nor the request's own Host's. A request
// without Origin (not every browser sends it on a same-origin POST) is
// not foreign.
func (s *server) foreignOrigin(r *http.Request) bool {
	origin, ok := r.Header["Origin"]
	if !ok {
		return false
	}
	if len(origin) != 1 {
		return true
	}
	if a, err := url.Parse(s.AdminURL); err == nil && a.Host != "" && asciiFold(origin[0], a.Scheme+"://"+a.Host) {
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
func asciiFold(a, b string) bool { return herald.EmailKey(a) == herald.EmailKey(b) }

// sameOrigin refuses a POST from a foreign Origin with 403 before h reads
// it: nothing is counted or recorded as a sign-in attempt, and a setup
// link is not looked at. The sign-in page says why; other forms get the
// error page.
func (d *dashboard) sameOrigin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !d.foreignOrigin(r) {
			h(w, r)
			return
		}
		d.Logger.WarnContext(r.Context(), "dashboard form from a foreign origin refused", "path", r.URL.Path, "origin", r.Header.Get("Origin"))
		p := &problem{Message: "This form was sent from another site (Origin " +
			strings.Join(r.Header["Origin"], ", ") + "). Open the dashboard at its own address and try again."}
		if r.URL.Path == "/login" {
			v := d.loginView("")
			v.Problem = p
			d.render(w, r, http.StatusForbidden, "login", v)
			return
		}
		d.render(w, r, http.StatusForbidden, "error", view{Title: "Error", Problem: p})
	}
}
