package admin

import (
	"net/http"

	"github.com/heraldpush/herald"
)

// The setup page: an operator's one-use link (DESIGN 11) to choose a
// password. A refused password does not use the link up; a used, replaced
// or expired link answers 410, an unknown one 404.

// setupData is what the setup page shows.
type setupData struct {
	Token string
	Op    herald.Operator
}

// setupPage shows the form to choose a password.
func (d *dashboard) setupPage(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	op, err := d.Store.SetupLink(r.Context(), herald.TokenHash(token))
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
	hash := herald.TokenHash(token)
	op, err := d.Store.SetupLink(r.Context(), hash)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	if bad := checkPassword(r.PostFormValue("password"), r.PostFormValue("confirm")); bad != "" {
		d.render(w, r, http.StatusBadRequest, "setup", view{Title: "Choose your password", Data: setupData{Token: token, Op: op},
			Problem: &problem{Code: herald.ErrInvalidRequest.Code, Message: bad}})
		return
	}
	if _, err := d.Store.UseSetupLink(r.Context(), hash, d.hasher.hash(r.PostFormValue("password"))); err != nil {
		d.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/login?setup=done", http.StatusSeeOther)
}
