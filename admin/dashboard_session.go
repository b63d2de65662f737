package admin

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/identity"
)

// The session cookie holds a random secret; the server keeps each session
// under a hash of it (sessionID), so the stored sessions are no cookies,
// a session works on every node, and signing out ends it everywhere. The
// CSRF token of a session is another hash of its secret. An operator's
// cookie depends on nothing else; the owner's also carries an HMAC of the
// secret keyed with the admin token, so changing the token signs the
// owner's sessions out.
const (
	sessionCookie = "herald_session"
	flashCookie   = "herald_flash"
	flashTTL      = 2 * time.Minute
	// maxFormBytes bounds a posted form; the largest is a service-account
	// file (64 KiB) sent as a file or in a text area.
	maxFormBytes = 1 << 20
)

// session is a signed-in browser: its cookie's secret, the stored
// session's ID and whose it is.
type session struct {
	secret, id string
	op         herald.Operator
}

type sessionKey struct{}

func sessionFrom(r *http.Request) (session, bool) {
	s, ok := r.Context().Value(sessionKey{}).(session)
	return s, ok
}

// withSession returns r carrying the session and its operator.
func withSession(r *http.Request, s session) *http.Request {
	return identity.WithOperator(r.WithContext(context.WithValue(r.Context(), sessionKey{}, s)), s.op)
}

// touchEvery is how stale a session's last-seen time may grow before a
// page records it again: the idle limit is kept to within it, without a
// write on every page.
const touchEvery = time.Minute

// storedSession reads the session cookie and returns the session it names
// when it was not ended, is neither idle too long nor too old (DESIGN 11)
// and, for the owner's, still matches the admin token. It may be awaiting
// its TOTP code.
func (d *dashboard) storedSession(r *http.Request) (session, identity.Session, bool) {
	c, err := r.Cookie(d.guard.CookieName(sessionCookie))
	if err != nil {
		return session{}, identity.Session{}, false
	}
	secret, mac, _ := strings.Cut(c.Value, ".")
	id, now := identity.SessionID(secret), d.Now()
	stored, op, err := d.sessions.Session(r.Context(), id)
	if err != nil {
		if !errors.Is(err, herald.ErrNotFound) {
			d.Logger.ErrorContext(r.Context(), "dashboard session lookup", "err", err)
		}
		return session{}, stored, false
	}
	if stored.OperatorID == herald.OwnerID && (d.Token == "" || !hmac.Equal([]byte(mac), []byte(d.guard.OwnerMAC(secret)))) {
		return session{}, stored, false
	}
	if now.Sub(stored.Started) >= identity.SessionLifetime || now.Sub(stored.LastSeen) >= identity.SessionIdle {
		return session{}, stored, false
	}
	return session{secret: secret, id: id, op: op}, stored, true
}

// session returns the signed-in session of the request: one whose TOTP
// code, when asked, was given. It records that the session was seen.
func (d *dashboard) session(r *http.Request) (session, bool) {
	sess, stored, ok := d.storedSession(r)
	if !ok || stored.AwaitingTOTP {
		return session{}, false
	}
	if now := d.Now(); now.Sub(stored.LastSeen) >= touchEvery {
		if err := d.sessions.TouchSession(r.Context(), sess.id, now, false); err != nil {
			d.Logger.ErrorContext(r.Context(), "dashboard session touch", "err", err)
		}
	}
	return sess, true
}

// startSession signs op in on this browser: a new session, awaiting its
// TOTP code when awaiting is set.
func (d *dashboard) startSession(w http.ResponseWriter, r *http.Request, op herald.Operator, awaiting bool) error {
	secret, now := rand.Text(), d.Now()
	sess := identity.Session{ID: identity.SessionID(secret), OperatorID: op.ID, Started: now, LastSeen: now, AwaitingTOTP: awaiting}
	if err := d.sessions.CreateSession(r.Context(), sess); err != nil {
		return err
	}
	if !awaiting && op.ID != herald.OwnerID { // the operator is seen signing in
		if err := d.sessions.TouchSession(r.Context(), sess.ID, now, false); err != nil {
			return err
		}
	}
	value := secret
	if op.ID == herald.OwnerID {
		value += "." + d.guard.OwnerMAC(secret)
	}
	d.setCookie(w, r, sessionCookie, value, int(identity.SessionLifetime.Seconds()))
	return nil
}

// setCookie sets a Path=/ cookie of the dashboard, named by
// cookieName (__Host- prefixed when the admin URL is https).
func (d *dashboard) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: d.guard.CookieName(name), Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: d.guard.SecureCookies(r),
	})
}

// signedIn lets through requests with a valid session whose operator may
// call a route that needs n (server.admit: the error page answers 404 for
// an app outside the operator's apps, 403 for a role short of n): others go
// to the login page. A POST must also carry the session's CSRF token.
func (d *dashboard) signedIn(n identity.Need, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, ok := d.session(r)
		if !ok {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		r = withSession(r, sess)
		r, err := d.guard.Admit(r, sess.op, n)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		if r.Method == http.MethodPost {
			if err := parseForm(w, r); err != nil {
				d.render(w, r, http.StatusRequestEntityTooLarge, "error", view{Title: "Error",
					Problem: &problem{Message: "The form could not be read: it must be at most 1 MiB."}})
				return
			}
			if !d.formFromSession(w, r, sess) {
				return
			}
		}
		if d.mustEnrol(sess.op) && !enrolment[r.URL.Path] {
			http.Redirect(w, r, "/account", http.StatusSeeOther)
			return
		}
		h(w, r)
	}
}

// formFromSession checks a posted form's CSRF token against the session;
// a refused form gets the error page.
func (d *dashboard) formFromSession(w http.ResponseWriter, r *http.Request, sess session) bool {
	got, want := r.PostFormValue("csrf"), identity.CSRFToken(sess.secret)
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		d.render(w, r, http.StatusForbidden, "error", view{Title: "Error",
			Problem: &problem{Message: "This form has expired or did not come from this dashboard. Reload the page and try again."}})
		return false
	}
	return true
}

// parseForm reads a posted form, URL-encoded or multipart, of at most
// maxFormBytes.
func parseForm(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	err := r.ParseMultipartForm(maxFormBytes)
	if errors.Is(err, http.ErrNotMultipart) {
		return nil // ParseMultipartForm has read the URL-encoded form
	}
	return err
}

// logout ends the session on the server, then clears the cookie. A
// session awaiting its TOTP code may sign out too.
func (d *dashboard) logout(w http.ResponseWriter, r *http.Request) {
	if sess, _, ok := d.storedSession(r); ok {
		r = withSession(r, sess)
		if err := parseForm(w, r); err != nil {
			d.fail(w, r, herald.ErrInvalidRequest)
			return
		}
		if !d.formFromSession(w, r, sess) {
			return
		}
		if err := d.sessions.DeleteSession(r.Context(), sess.id); err != nil {
			d.fail(w, r, err)
			return
		}
	}
	d.setCookie(w, r, sessionCookie, "", -1)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// flash is what a successful POST leaves for the page it redirects to: a
// notice and, right after a key or secret was made, the secret to show
// once. It travels in a short-lived cookie sealed with the master key and
// bound to the session, and is dropped once read.
type flash struct {
	AppID       string `json:"appId,omitempty"`
	Notice      string `json:"notice,omitempty"`
	SecretLabel string `json:"secretLabel,omitempty"`
	SecretValue string `json:"secretValue,omitempty"`
	Session     string `json:"session"`
	Expires     int64  `json:"expires"`
}

func (d *dashboard) setFlash(w http.ResponseWriter, r *http.Request, sess session, f flash) {
	if d.MasterKey == nil {
		return
	}
	f.Session, f.Expires = sess.id, d.Now().Add(flashTTL).Unix()
	b, err := json.Marshal(f)
	if err != nil {
		return
	}
	d.setCookie(w, r, flashCookie, base64.RawURLEncoding.EncodeToString(d.MasterKey.Seal(b)), int(flashTTL.Seconds()))
}

// takeFlash reads the flash left for this GET, and clears it.
func (d *dashboard) takeFlash(w http.ResponseWriter, r *http.Request, sess session) (flash, bool) {
	c, err := r.Cookie(d.guard.CookieName(flashCookie))
	if err != nil || r.Method != http.MethodGet || d.MasterKey == nil {
		return flash{}, false
	}
	d.setCookie(w, r, flashCookie, "", -1)
	var f flash
	sealed, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil {
		return flash{}, false
	}
	b, err := d.MasterKey.Open(sealed)
	if err != nil || json.Unmarshal(b, &f) != nil || f.Session != sess.id || d.Now().Unix() >= f.Expires {
		return flash{}, false
	}
	return f, true
}
