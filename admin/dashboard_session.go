package admin

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald"
)

// The session cookie is "<nonce>.<expiry>.<HMAC of both keyed with the
// admin token>", so it never holds the token, and changing the token signs
// every session out. The server also keeps each session (by a hash of its
// nonce) until it ends, so signing out ends it: the cookie is refused
// afterwards even when a copy of it survives. The CSRF token of a session
// is another HMAC of its nonce.
const (
	sessionCookie = "herald_session"
	flashCookie   = "herald_flash"
	flashTTL      = 2 * time.Minute
	// maxFormBytes bounds a posted form; the largest is a service-account
	// file (64 KiB) sent as a file or in a text area.
	maxFormBytes = 1 << 20
)

// session is a signed-in browser: its cookie's nonce and whose it is.
type session struct {
	nonce string
	op    herald.Operator
}

type sessionKey struct{}

func sessionFrom(r *http.Request) (session, bool) {
	s, ok := r.Context().Value(sessionKey{}).(session)
	return s, ok
}

// mac is the HMAC-SHA256, keyed with the admin token, of the parts.
func (d *dashboard) mac(parts ...string) string {
	h := hmac.New(sha256.New, []byte(d.Token))
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

func (d *dashboard) csrfToken(s session) string { return d.mac("csrf", s.nonce) }

// sessionID is the server's name of a session: a hash of its nonce, so the
// stored sessions are no cookies.
func sessionID(nonce string) string {
	h := sha256.Sum256([]byte("herald-session\x00" + nonce))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// touchEvery is how stale a session's last-seen time may grow before a
// page records it again: the idle limit is kept to within it, without a
// write on every page.
const touchEvery = time.Minute

// session reads and checks the session cookie, that the session was not
// ended, and that it is neither idle too long nor too old (DESIGN 11).
func (d *dashboard) session(r *http.Request) (session, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || d.Token == "" {
		return session{}, false
	}
	parts := strings.Split(c.Value, ".")
	if len(parts) != 3 || !hmac.Equal([]byte(parts[2]), []byte(d.mac("session", parts[0], parts[1]))) {
		return session{}, false
	}
	id, now := sessionID(parts[0]), d.Now()
	stored, op, err := d.sessions.Session(r.Context(), id)
	if err != nil {
		if !errors.Is(err, herald.ErrNotFound) {
			d.Logger.ErrorContext(r.Context(), "dashboard session lookup", "err", err)
		}
		return session{}, false
	}
	if stored.AwaitingTOTP || now.Sub(stored.Started) >= herald.SessionLifetime || now.Sub(stored.LastSeen) >= herald.SessionIdle {
		return session{}, false
	}
	if now.Sub(stored.LastSeen) >= touchEvery {
		if err := d.sessions.TouchSession(r.Context(), id, now, false); err != nil {
			d.Logger.ErrorContext(r.Context(), "dashboard session touch", "err", err)
		}
	}
	return session{nonce: parts[0], op: op}, true
}

func (d *dashboard) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: viaHTTPS(r, d.TrustProxy),
	})
}

// signedIn lets through requests with a valid session: others go to the
// login page. A POST must also carry the session's CSRF token.
func (d *dashboard) signedIn(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, ok := d.session(r)
		if !ok {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		r = withOperator(r.WithContext(context.WithValue(r.Context(), sessionKey{}, sess)), sess.op)
		if r.Method == http.MethodPost {
			if err := parseForm(w, r); err != nil {
				d.render(w, r, http.StatusRequestEntityTooLarge, "error", view{Title: "Error",
					Problem: &problem{Message: "The form could not be read: it must be at most 1 MiB."}})
				return
			}
			got, want := r.PostFormValue("csrf"), d.csrfToken(sess)
			if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
				d.render(w, r, http.StatusForbidden, "error", view{Title: "Error",
					Problem: &problem{Message: "This form has expired or did not come from this dashboard. Reload the page and try again."}})
				return
			}
		}
		h(w, r)
	}
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

func (d *dashboard) loginPage(w http.ResponseWriter, r *http.Request) {
	if _, ok := d.session(r); ok {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	d.render(w, r, http.StatusOK, "login", view{Title: "Sign in"})
}

// login checks the pasted admin token in constant time, like the bearer
// check of the JSON API, and starts a session. An address that failed too
// often is refused for a while, whatever it sends.
func (d *dashboard) login(w http.ResponseWriter, r *http.Request) {
	addr := clientAddr(r, d.TrustProxy)
	if wait := d.throttle.wait(addr, d.Now()); wait > 0 {
		secs := int(wait.Round(time.Second).Seconds())
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		d.render(w, r, http.StatusTooManyRequests, "login", view{Title: "Sign in",
			Problem: &problem{Code: herald.ErrTooManyRequests.Code, Message: fmt.Sprintf("Too many failed sign-ins from your address. Try again in %d seconds.", max(secs, 1))}})
		return
	}
	if err := parseForm(w, r); err != nil {
		d.render(w, r, http.StatusRequestEntityTooLarge, "login", view{Title: "Sign in",
			Problem: &problem{Message: "The form could not be read."}})
		return
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(r.PostFormValue("token"))))
	want := sha256.Sum256([]byte(d.Token))
	if d.Token == "" || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		d.throttle.failed(addr, d.Now())
		d.Logger.WarnContext(r.Context(), "dashboard sign-in refused", "client", addr)
		d.render(w, r, http.StatusUnauthorized, "login", view{Title: "Sign in",
			Problem: &problem{Code: herald.ErrUnauthorized.Code, Message: "That is not the admin token."}})
		return
	}
	nonce, now := rand.Text(), d.Now()
	expires := now.Add(herald.SessionLifetime)
	sess := herald.Session{ID: sessionID(nonce), OperatorID: herald.OwnerID, Started: now, LastSeen: now}
	if err := d.sessions.CreateSession(r.Context(), sess); err != nil {
		d.fail(w, r, err)
		return
	}
	exp := strconv.FormatInt(expires.Unix(), 10)
	d.setCookie(w, r, sessionCookie, nonce+"."+exp+"."+d.mac("session", nonce, exp), int(herald.SessionLifetime.Seconds()))
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// logout ends the session on the server, then clears the cookie.
func (d *dashboard) logout(w http.ResponseWriter, r *http.Request) {
	if sess, ok := sessionFrom(r); ok {
		if err := d.sessions.DeleteSession(r.Context(), sessionID(sess.nonce)); err != nil {
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
	f.Session, f.Expires = sess.nonce, d.Now().Add(flashTTL).Unix()
	b, err := json.Marshal(f)
	if err != nil {
		return
	}
	d.setCookie(w, r, flashCookie, base64.RawURLEncoding.EncodeToString(d.MasterKey.Seal(b)), int(flashTTL.Seconds()))
}

// takeFlash reads the flash left for this GET, and clears it.
func (d *dashboard) takeFlash(w http.ResponseWriter, r *http.Request, sess session) (flash, bool) {
	c, err := r.Cookie(flashCookie)
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
	if err != nil || json.Unmarshal(b, &f) != nil || f.Session != sess.nonce || d.Now().Unix() >= f.Expires {
		return flash{}, false
	}
	return f, true
}
