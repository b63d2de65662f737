package admin

import (
	"errors"
	"net/http"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/identity"
)

// The setup page: an operator's one-use link (DESIGN 11) to choose a
// password. A refused password does not use the link up; a used, replaced
// or expired link, or one of a disabled operator, answers 410, an unknown
// one 404. Both the page and the form leave an access record, as a
// sign-in attempt does: the link's operator as actor when the link is
// valid, null when not, with the status answered. A password set here ends
// the operator's other sessions and API tokens (the store does it in the
// transaction that spends the link).

// setupData is what the setup page shows.
type setupData struct {
	Token string
	Op    herald.Operator
}

// setupLinkOf finds the link's operator and notes it for the request's
// access record: the operator when the link is valid, no one when it is
// not (or is gone).
func (d *dashboard) setupLinkOf(r *http.Request, token string) (herald.Operator, error) {
	op, err := d.Store.SetupLink(r.Context(), identity.TokenHash(token))
	switch {
	case err == nil:
		access.NoteOf(r.Context()).SignIn(op.Email, op)
	case errors.Is(err, herald.ErrNotFound), errors.Is(err, herald.ErrLinkGone):
		access.NoteOf(r.Context()).SignIn("", herald.Operator{})
	}
	return op, err
}

// setupPage shows the form to choose a password.
func (d *dashboard) setupPage(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	op, err := d.setupLinkOf(r, token)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "setup", view{Title: "Choose your password", Data: setupData{Token: token, Op: op}})
}

// setup sets the password and uses the link up; the operator signs in
// next.
func (d *dashboard) setup(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(w, r); err != nil {
		d.fail(w, r, herald.ErrInvalidRequest)
		return
	}
	token := r.PostFormValue("token")
	op, err := d.setupLinkOf(r, token)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	if bad := identity.CheckPassword(r.PostFormValue("password"), r.PostFormValue("confirm")); bad != "" {
		d.render(w, r, http.StatusBadRequest, "setup", view{Title: "Choose your password", Data: setupData{Token: token, Op: op},
			Problem: &problem{Code: herald.ErrInvalidRequest.Code, Message: bad}})
		return
	}
	if _, err := d.Store.UseSetupLink(r.Context(), identity.TokenHash(token), d.hasher.Hash(r.PostFormValue("password"))); err != nil {
		if errors.Is(err, herald.ErrLinkGone) { // spent meanwhile: this request set nothing
			access.NoteOf(r.Context()).SignIn(op.Email, herald.Operator{})
		}
		d.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/login?setup=done", http.StatusSeeOther)
}
