package admin

import (
	"context"
	"net/http"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/identity"
	"github.com/heraldpush/herald/web"
)

// An operator's own account (DESIGN 11): enrolling TOTP, on the dashboard's
// Account page and through POST /admin/v1/me/totp and …/confirm. A secret
// is issued (kept sealed with the master key as pending), then confirmed
// by a code made with it, which enrols it. The owner's token has no
// account.

// errEnrolled refuses a second enrolment: an admin resets TOTP first.
var errEnrolled = herald.ErrInvalidRequest.With(herald.Detail{Field: "totp",
	Reason: "is already enrolled: an admin can reset it"})

// newTOTP issues op a TOTP secret and keeps it pending.
func (s *server) newTOTP(ctx context.Context, op herald.Operator) (*otp.Key, error) {
	if op.TOTP {
		return nil, errEnrolled
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: "Herald", AccountName: op.Email,
		Period: identity.TOTPOptions.Period, Digits: identity.TOTPOptions.Digits, Algorithm: identity.TOTPOptions.Algorithm})
	if err != nil {
		return nil, err
	}
	return key, s.Store.SetPendingTOTP(ctx, op.ID, s.MasterKey.Seal([]byte(key.Secret())))
}

// confirmTOTPCode enrols op's pending secret when code was made with it;
// a wrong code is ErrInvalidRequest naming it.
func (s *server) confirmTOTPCode(ctx context.Context, op herald.Operator, code string) error {
	_, ok, err := s.checkTOTP(ctx, op.ID, code, true)
	if err != nil {
		return err
	}
	if !ok {
		return herald.ErrInvalidRequest.With(herald.Detail{Field: "code", Reason: "is not the code of the secret issued (or none was issued)"})
	}
	return s.Store.ConfirmTOTP(ctx, op.ID)
}

// postMyTOTP is POST /admin/v1/me/totp: {secret, otpauthUrl}.
func (s *server) postMyTOTP(w http.ResponseWriter, r *http.Request) {
	op, _ := identity.OperatorFrom(r)
	key, err := s.newTOTP(r.Context(), op)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, map[string]string{"secret": key.Secret(), "otpauthUrl": key.URL()})
}

// postMyTOTPConfirm is POST /admin/v1/me/totp/confirm {code}: 204.
func (s *server) postMyTOTPConfirm(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Code string `json:"code"`
	}
	if err := decode(r, &body); err != nil {
		web.Error(w, r, err)
		return
	}
	op, _ := identity.OperatorFrom(r)
	if err := s.confirmTOTPCode(r.Context(), op, body.Code); err != nil {
		web.Error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// accountData is what the Account page shows: the operator and, right
// after a secret was issued, the secret to enter.
type accountData struct {
	Op herald.Operator
	// Secret and URL are the pending secret's, shown once.
	Secret, URL string
	// MustEnrol says no other page opens before TOTP is enrolled.
	MustEnrol bool
}

func (d *dashboard) accountView(op herald.Operator, key *otp.Key) view {
	data := accountData{Op: op, MustEnrol: d.mustEnrol(op)}
	if key != nil {
		data.Secret, data.URL = key.Secret(), key.URL()
	}
	return view{Title: "Account", Data: data}
}

func (d *dashboard) accountPage(w http.ResponseWriter, r *http.Request) {
	op, _ := identity.OperatorFrom(r)
	d.render(w, r, http.StatusOK, "account", d.accountView(op, nil))
}

// enrolTOTP issues a secret and shows it with the form for its code.
func (d *dashboard) enrolTOTP(w http.ResponseWriter, r *http.Request) {
	op, _ := identity.OperatorFrom(r)
	key, err := d.newTOTP(r.Context(), op)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "account", d.accountView(op, key))
}

// confirmTOTP enrols the secret the code was made with.
func (d *dashboard) confirmTOTP(w http.ResponseWriter, r *http.Request) {
	op, _ := identity.OperatorFrom(r)
	if err := d.confirmTOTPCode(r.Context(), op, r.PostFormValue("code")); err != nil {
		d.failOn(w, r, err, "account", d.accountView(op, nil))
		return
	}
	d.done(w, r, "/account", flash{Notice: "TOTP is set up: signing in asks for a code from now on."})
}
