package admin

import (
	"net/http"
	"strings"
)

// Where the dashboard's browser comes from (DESIGN 11): when
// HERALD_ADMIN_URL is https, the cookies are Secure and named with the
// __Host- prefix (Path=/, no Domain), so that no other site, nor plain
// http to the same host, can set or read them; over http they stay as
// they were, for a dashboard on loopback. The forms that sign in or set a
// password refuse a foreign Origin header: a page elsewhere cannot post a
// sign-in (login CSRF, signing the browser in as someone else) or guess
// passwords through the visitor's browser.

// sameOrigin refuses a POST from a foreign Origin with 403 before h reads
// it: nothing is counted or recorded as a sign-in attempt, and a setup
// link is not looked at. The sign-in page says why; other forms get the
// error page.
func (d *dashboard) sameOrigin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !d.guard.ForeignOrigin(r) {
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
