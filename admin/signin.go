package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/identity"
)

// Signing in to the dashboard (DESIGN 11): an operator by email and
// password, then a TOTP code once enrolled; or by single sign-on
// (oidc.go); or the owner by the admin token, never asked for a code.
// Every outcome is noted for the access record.

// loginData is what the sign-in page shows beside its forms.
type loginData struct {
	// Email is the email typed, kept in the form after a refusal.
	Email string
	// OIDC shows the single sign-on button.
	OIDC bool
}

func (d *dashboard) loginView(email string) view {
	return view{Title: "Sign in", Data: loginData{Email: email, OIDC: d.oidc != nil}}
}

func (d *dashboard) loginPage(w http.ResponseWriter, r *http.Request) {
	if _, ok := d.session(r); ok {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	v := d.loginView("")
	if r.URL.Query().Get("setup") == "done" {
		v.Notice = "Your password is set. Sign in with it."
	}
	d.render(w, r, http.StatusOK, "login", v)
}

// login takes the sign-in page's forms: the owner's token when the form
// has a token field, else an operator's email and password.
func (d *dashboard) login(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(w, r); err != nil {
		v := d.loginView("")
		v.Problem = &problem{Message: "The form could not be read."}
		d.render(w, r, http.StatusRequestEntityTooLarge, "login", v)
		return
	}
	if _, ok := r.PostForm["token"]; ok {
		d.ownerLogin(w, r)
		return
	}
	d.passwordLogin(w, r)
}

// ownerLogin checks the pasted admin token in constant time, like the
// bearer check of the JSON API, and starts the owner's session.
func (d *dashboard) ownerLogin(w http.ResponseWriter, r *http.Request) {
	note, v := access.NoteOf(r.Context()), d.loginView("")
	a, ok := d.admitAttempt(w, r, "login", v, identity.OwnerKey(identity.ClientAddr(r, d.TrustProxy)))
	if !ok {
		return
	}
	note.SignIn("", herald.Operator{})
	got := sha256.Sum256([]byte(strings.TrimSpace(r.PostFormValue("token"))))
	want := sha256.Sum256([]byte(d.Token))
	if d.Token == "" || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		d.Logger.WarnContext(r.Context(), "dashboard sign-in refused", "client", identity.ClientAddr(r, d.TrustProxy))
		v.Problem = &problem{Code: herald.ErrUnauthorized.Code, Message: "That is not the admin token."}
		d.render(w, r, http.StatusUnauthorized, "login", v)
		return
	}
	d.guard.Forgive(r.Context(), a)
	note.SignIn("", herald.Owner())
	d.signedInAs(w, r, herald.Owner())
}

// admitAttempt counts a sign-in attempt under keys before it is judged:
// ok when it may be judged; otherwise it has answered 429 with
// Retry-After on page v (the attempt left to the window's aggregated
// record), or the error that kept the attempt from being counted.
func (d *dashboard) admitAttempt(w http.ResponseWriter, r *http.Request, page string, v view, keys ...string) (identity.Attempt, bool) {
	a, err := d.guard.CountSignIn(r.Context(), keys...)
	switch {
	case err != nil:
		d.failOn(w, r, err, page, v)
		return a, false
	case a.Refused():
		// Not noted as a sign-in: the window's aggregated record counts it.
		d.tooMany(w, r, a.Wait, page, v)
		return a, false
	}
	return a, true
}

// passwordLogin checks an operator's email and password. A wrong password,
// an unknown email, an operator without a password yet and a disabled one
// are answered alike, after as long a hash.
func (d *dashboard) passwordLogin(w http.ResponseWriter, r *http.Request) {
	email, password := strings.TrimSpace(r.PostFormValue("email")), r.PostFormValue("password")
	note, v := access.NoteOf(r.Context()), d.loginView(email)
	a, ok := d.admitAttempt(w, r, "login", v, identity.AddressKey(identity.ClientAddr(r, d.TrustProxy)), identity.TypedEmailKey(email))
	if !ok {
		return
	}
	note.SignIn(email, herald.Operator{})
	op, ok, err := d.checkPassword(r.Context(), email, password)
	if err != nil {
		d.failOn(w, r, err, "login", v)
		return
	}
	if !ok {
		d.Logger.WarnContext(r.Context(), "dashboard sign-in refused", "client", identity.ClientAddr(r, d.TrustProxy))
		v.Problem = &problem{Code: herald.ErrUnauthorized.Code, Message: "Wrong email or password."}
		d.render(w, r, http.StatusUnauthorized, "login", v)
		return
	}
	d.guard.Forgive(r.Context(), a)
	note.SignIn(email, op)
	if op.TOTP {
		if err := d.startSession(w, r, op, true); err != nil {
			d.failOn(w, r, err, "login", v)
			return
		}
		http.Redirect(w, r, "/login/totp", http.StatusSeeOther)
		return
	}
	d.signedInAs(w, r, op)
}

// checkPassword finds the enabled operator with the email whose password
// it is.
func (d *dashboard) checkPassword(ctx context.Context, email, password string) (herald.Operator, bool, error) {
	op, secrets, err := d.Store.OperatorByEmail(ctx, email)
	if err != nil && !errors.Is(err, herald.ErrNotFound) {
		return op, false, err
	}
	if err != nil || op.Disabled || secrets.PasswordHash == "" {
		d.hasher.VerifyNone(password)
		return herald.Operator{}, false, nil
	}
	ok, err := d.hasher.Verify(password, secrets.PasswordHash)
	if err != nil {
		return herald.Operator{}, false, err
	}
	return op, ok, nil
}

// signedInAs starts op's session and sends the browser on.
func (d *dashboard) signedInAs(w http.ResponseWriter, r *http.Request, op herald.Operator) {
	if err := d.startSession(w, r, op, false); err != nil {
		d.failOn(w, r, err, "login", d.loginView(op.Email))
		return
	}
	http.Redirect(w, r, d.landing(op), http.StatusSeeOther)
}

// landing is the first page after signing in: the account page's TOTP
// enrolment when it must come first, else the apps.
func (d *dashboard) landing(op herald.Operator) string {
	if d.mustEnrol(op) {
		return "/account"
	}
	return "/"
}

// mustEnrol reports whether op must enrol TOTP before any other page
// (HERALD_REQUIRE_TOTP, for admins).
func (d *dashboard) mustEnrol(op herald.Operator) bool {
	return d.RequireTOTP && op.ID != herald.OwnerID && op.Role == herald.RoleAdmin && !op.TOTP
}

// enrolment are the pages an operator who must enrol may still open
// (signing out does not need a complete session).
var enrolment = map[string]bool{"/account": true, "/account/totp": true, "/account/totp/confirm": true}

// awaitingTOTP returns the request's session that waits for its TOTP code.
func (d *dashboard) awaitingTOTP(r *http.Request) (session, bool) {
	sess, stored, ok := d.storedSession(r)
	return sess, ok && stored.AwaitingTOTP
}

// totpPage asks a session whose password was right for its TOTP code.
func (d *dashboard) totpPage(w http.ResponseWriter, r *http.Request) {
	sess, ok := d.awaitingTOTP(r)
	if !ok {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	d.render(w, withSession(r, sess), http.StatusOK, "totp", view{Title: "Sign in: code"})
}

// totpLogin checks the code and spends its step with the session's wait
// (UseTOTPStep), so a code signs in one session; a wrong or used code
// counts as a failed sign-in, under the address and the operator's email.
func (d *dashboard) totpLogin(w http.ResponseWriter, r *http.Request) {
	sess, ok := d.awaitingTOTP(r)
	if !ok {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	r = withSession(r, sess)
	v := view{Title: "Sign in: code"}
	if err := parseForm(w, r); err != nil {
		d.failOn(w, r, herald.ErrInvalidRequest, "totp", v)
		return
	}
	if !d.formFromSession(w, r, sess) {
		return
	}
	note := access.NoteOf(r.Context())
	a, ok := d.admitAttempt(w, r, "totp", v, identity.AddressKey(identity.ClientAddr(r, d.TrustProxy)), identity.TypedEmailKey(sess.op.Email))
	if !ok {
		return
	}
	note.SignIn(sess.op.Email, herald.Operator{})
	step, ok, err := d.checkTOTP(r.Context(), sess.op.ID, r.PostFormValue("code"), false)
	if err == nil && ok {
		ok, err = d.Store.UseTOTPStep(r.Context(), sess.id, sess.op.ID, step, d.Now())
	}
	if err != nil {
		d.failOn(w, r, err, "totp", v)
		return
	}
	if !ok {
		v.Problem = &problem{Code: herald.ErrUnauthorized.Code, Message: "That code is not right, or was used already. Enter the next code your authenticator app shows."}
		d.render(w, r, http.StatusUnauthorized, "totp", v)
		return
	}
	d.guard.Forgive(r.Context(), a)
	note.SignIn(sess.op.Email, sess.op)
	http.Redirect(w, r, d.landing(sess.op), http.StatusSeeOther)
}

// checkTOTP returns the time step whose code code is, of the operator's
// enrolled secret or with pending of the one awaiting confirmation; ok
// false when it is none of now's and the steps either side.
func (s *server) checkTOTP(ctx context.Context, operatorID, code string, pending bool) (step uint64, ok bool, err error) {
	secrets, err := s.Store.OperatorSecrets(ctx, operatorID)
	if err != nil {
		return 0, false, err
	}
	sealed := secrets.TOTP
	if pending {
		sealed = secrets.PendingTOTP
	}
	if sealed == nil {
		return 0, false, nil
	}
	secret, err := s.MasterKey.Open(sealed)
	if err != nil {
		return 0, false, err
	}
	return identity.CodeStep(string(secret), code, s.Now())
}

// tooMany answers a throttled sign-in: 429 with Retry-After, on page v.
func (d *dashboard) tooMany(w http.ResponseWriter, r *http.Request, wait time.Duration, page string, v view) {
	secs := identity.RetryAfter(wait)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	v.Problem = &problem{Code: herald.ErrTooManyRequests.Code,
		Message: fmt.Sprintf("Too many failed sign-ins from your address or for this email. Try again in %s.", (time.Duration(secs) * time.Second).String())}
	d.render(w, r, http.StatusTooManyRequests, page, v)
}
