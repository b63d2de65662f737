package admin

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/identity"
)

// The Operators pages (unscoped admins): the list with the add form, and
// one operator's page with its edit form, enable/disable, a new setup
// link, its API tokens and delete. They read their forms into the same
// operatorInput and tokenInput as the admin API and call the same
// operator.go functions, so both apply one set of rules. A setup link or
// token made here is shown once, as the app secrets are.

// operatorsData is what the Operators page shows.
type operatorsData struct {
	Operators []herald.Operator
	// Apps are the apps an operator may be given.
	Apps  []herald.App
	Roles []string
	// Form is the add form as posted (to show it again); Scoped and
	// Chosen are its apps.
	Form operatorForm
}

// operatorForm is an operator's form: as posted, or as stored.
type operatorForm struct {
	Email, Name, Role string
	// Scoped: only Chosen apps; else every app.
	Scoped bool
	Chosen []string
}

// Picked reports whether the form has the app chosen.
func (f operatorForm) Picked(appID string) bool {
	return slices.Contains(f.Chosen, appID)
}

// operatorData is what one operator's page shows.
type operatorData struct {
	Operator herald.Operator
	Tokens   []identity.OperatorToken
	Apps     []herald.App
	Roles    []string
	Form     operatorForm
	// Self: the page is the signed-in operator's own, which cannot be
	// disabled or deleted.
	Self bool
}

func roleNames() []string {
	return []string{herald.RoleViewer.String(), herald.RoleOperator.String(), herald.RoleAdmin.String()}
}

// operatorInputOf reads an operator's form: "scope" is "every" or "some",
// "app" each chosen app. Email is read only when adding. A form without a
// scope, or with another, is refused (scopeProblem) rather than read as
// every app: a form that lost its radio buttons must not make an admin of
// every app.
func operatorInputOf(f url.Values, create bool) (operatorInput, operatorForm) {
	form := operatorForm{Email: strings.TrimSpace(f.Get("email")), Name: f.Get("name"), Role: f.Get("role"),
		Scoped: f.Get("scope") == "some", Chosen: f["app"]}
	in := operatorInput{Name: &form.Name, Role: &form.Role}
	if create {
		in.Email = &form.Email
	}
	var apps []string
	if form.Scoped {
		apps = append([]string{}, form.Chosen...)
	}
	in.Apps = &apps
	return in, form
}

// scopeProblem refuses an operator's form whose scope is missing or
// neither "every" nor "some"; nil when it is one of them.
func scopeProblem(f url.Values) error {
	switch f.Get("scope") {
	case "every", "some":
		return nil
	}
	return herald.Invalid(herald.Detail{Field: "scope",
		Reason: `is required: "every" for every app, or "some" with the apps chosen`})
}

func formOf(o herald.Operator) operatorForm {
	return operatorForm{Email: o.Email, Name: o.Name, Role: o.Role.String(), Scoped: !o.EveryApp(), Chosen: o.Apps}
}

func operatorPath(id string, rest ...string) string {
	p := "/operators/" + url.PathEscape(id)
	for _, s := range rest {
		p += "/" + url.PathEscape(s)
	}
	return p
}

func (d *dashboard) operatorsView(r *http.Request, form operatorForm) (view, error) {
	ops, err := d.Store.Operators(r.Context())
	if err != nil {
		return view{}, err
	}
	apps, err := d.Store.ListApps(r.Context())
	if err != nil {
		return view{}, err
	}
	return view{Title: "Operators", Data: operatorsData{Operators: ops, Apps: apps, Roles: roleNames(), Form: form}}, nil
}

func (d *dashboard) operatorsPage(w http.ResponseWriter, r *http.Request) {
	v, err := d.operatorsView(r, operatorForm{Role: herald.RoleViewer.String()})
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "operators", v)
}

func (d *dashboard) addOperatorForm(w http.ResponseWriter, r *http.Request) {
	in, form := operatorInputOf(r.PostForm, true)
	err := scopeProblem(r.PostForm)
	var o herald.Operator
	var setupURL string
	if err == nil {
		o, setupURL, err = d.addOperator(r.Context(), in)
	}
	if err != nil {
		v, lerr := d.operatorsView(r, form)
		if lerr != nil {
			d.fail(w, r, lerr)
			return
		}
		d.failOn(w, r, err, "operators", v)
		return
	}
	d.done(w, r, operatorPath(o.ID), flash{Notice: "Operator added. Send them the setup link: it works once, for 24 hours.",
		SecretLabel: "Setup link", SecretValue: setupURL})
}

// operatorView is operator id's page, with form as the edit form (the
// stored operator's when nil).
func (d *dashboard) operatorView(r *http.Request, id string, form *operatorForm) (view, error) {
	o, err := d.Store.Operator(r.Context(), id)
	if err != nil {
		return view{}, err
	}
	ts, err := d.Store.OperatorTokens(r.Context(), id)
	if err != nil {
		return view{}, err
	}
	apps, err := d.Store.ListApps(r.Context())
	if err != nil {
		return view{}, err
	}
	f := formOf(o)
	if form != nil {
		f = *form
	}
	data := operatorData{Operator: o, Tokens: ts, Apps: apps, Roles: roleNames(), Form: f, Self: identity.RequestOperator(r).ID == o.ID}
	return view{Title: o.Name, Data: data}, nil
}

func (d *dashboard) operatorPage(w http.ResponseWriter, r *http.Request) {
	v, err := d.operatorView(r, r.PathValue("operatorId"), nil)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "operator", v)
}

// failOnOperator shows err on operator id's page, with form as posted.
func (d *dashboard) failOnOperator(w http.ResponseWriter, r *http.Request, id string, form *operatorForm, err error) {
	v, lerr := d.operatorView(r, id, form)
	if lerr != nil {
		d.fail(w, r, lerr)
		return
	}
	d.failOn(w, r, err, "operator", v)
}

func (d *dashboard) editOperatorForm(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("operatorId")
	in, form := operatorInputOf(r.PostForm, false)
	err := scopeProblem(r.PostForm)
	if err == nil {
		_, err = d.changeOperator(r.Context(), identity.RequestOperator(r), id, in)
	}
	if err != nil {
		d.failOnOperator(w, r, id, &form, err)
		return
	}
	d.done(w, r, operatorPath(id), flash{Notice: "Operator saved: the change applies to their sessions and tokens at once."})
}

func (d *dashboard) disableOperatorForm(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("operatorId")
	disabled, err := strconv.ParseBool(r.PostFormValue("disabled"))
	if err != nil {
		d.failOnOperator(w, r, id, nil, herald.Invalid(herald.Detail{Field: "disabled", Reason: "must be true or false"}))
		return
	}
	if _, err := d.changeOperator(r.Context(), identity.RequestOperator(r), id, operatorInput{Disabled: &disabled}); err != nil {
		d.failOnOperator(w, r, id, nil, err)
		return
	}
	notice := "Operator enabled. Their old API tokens stay revoked; they sign in with their password."
	if disabled {
		notice = "Operator disabled: their sessions and API tokens ended."
	}
	d.done(w, r, operatorPath(id), flash{Notice: notice})
}

func (d *dashboard) deleteOperatorConfirm(w http.ResponseWriter, r *http.Request) {
	o, err := d.Store.Operator(r.Context(), r.PathValue("operatorId"))
	if err != nil {
		d.fail(w, r, err)
		return
	}
	c := confirmData{
		Question:    "Delete the operator " + o.Name + "?",
		Consequence: o.Email + " can no longer sign in: their sessions, API tokens and setup link end at once. Their access records stay.",
		Action:      operatorPath(o.ID, "delete"), Button: "Delete the operator", ButtonID: "confirm-operator-delete", Back: operatorPath(o.ID),
	}
	if identity.RequestOperator(r).ID == o.ID {
		c.Blocked = "You cannot delete yourself."
	}
	d.render(w, r, http.StatusOK, "confirm", view{Title: c.Question, Data: c})
}

func (d *dashboard) deleteOperatorForm(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("operatorId")
	if !confirmed(r) {
		http.Redirect(w, r, r.URL.Path, http.StatusSeeOther)
		return
	}
	if err := d.removeOperator(r.Context(), identity.RequestOperator(r), id); err != nil {
		d.failOnOperator(w, r, id, nil, err)
		return
	}
	d.done(w, r, "/operators", flash{Notice: "Operator deleted."})
}

func (d *dashboard) setupLinkForm(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("operatorId")
	setupURL, _, err := d.renewSetupLink(r.Context(), id)
	if err != nil {
		d.failOnOperator(w, r, id, nil, err)
		return
	}
	d.done(w, r, operatorPath(id), flash{Notice: "New setup link made; the old one no longer works. It works once, for 24 hours.",
		SecretLabel: "Setup link", SecretValue: setupURL})
}

func (d *dashboard) resetTOTPForm(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("operatorId")
	if err := d.resetTOTP(r.Context(), id); err != nil {
		d.failOnOperator(w, r, id, nil, err)
		return
	}
	d.done(w, r, operatorPath(id), flash{Notice: "TOTP reset: they enrol again from their Account page."})
}

func (d *dashboard) createTokenForm(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("operatorId")
	name := r.PostFormValue("name")
	in := tokenInput{Name: &name, Days: formNumber(r.PostFormValue("expiresInDays"))}
	token, _, err := d.issueToken(r.Context(), id, in)
	if err != nil {
		d.failOnOperator(w, r, id, nil, err)
		return
	}
	d.done(w, r, operatorPath(id), flash{Notice: "API token made. It acts with the operator's role and apps.",
		SecretLabel: "API token", SecretValue: token})
}

func (d *dashboard) deleteTokenForm(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("operatorId")
	if err := d.Store.DeleteOperatorToken(r.Context(), id, r.PathValue("tokenId")); err != nil {
		d.failOnOperator(w, r, id, nil, err)
		return
	}
	d.done(w, r, operatorPath(id), flash{Notice: "API token revoked."})
}
