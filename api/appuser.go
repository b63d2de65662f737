package api

import (
	"errors"
	"net/http"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/request"
	"github.com/heraldpush/herald/web"
)

// setMarketing is PATCH /api/app-user/v2/marketing (spec 4.1).
func (s *server) setMarketing(w http.ResponseWriter, r *http.Request) {
	app := appFrom(r.Context())
	body, err := readBody(r, request.DefaultBodyLimit)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	o, details := request.Parse(body)
	userID, _ := o.UserID("userId")
	var change herald.ConsentChange
	if state, ok := o.Child("state", true); ok {
		change = herald.ConsentChange{Marketing: state.Boolean("marketing"), MarketingNight: state.Boolean("marketingNight")}
		if len(*details) == 0 {
			*details = append(*details, change.Shape("state")...)
		}
	}
	if err := o.Check(); err != nil {
		web.Error(w, r, err)
		return
	}
	c, err := s.store.SetUserConsent(r.Context(), app.ID, userID, change)
	switch {
	case errors.Is(err, herald.ErrUserWithdrawn):
		err = herald.ErrMarketingWithdrawn
	case errors.Is(err, herald.ErrUserNotFound):
		err = herald.ErrMarketingNoUser
	}
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, c)
}

// withdrawUser is DELETE /api/app-user/v2 (spec 4.2).
func (s *server) withdrawUser(w http.ResponseWriter, r *http.Request) {
	app := appFrom(r.Context())
	body, err := readBody(r, request.DefaultBodyLimit)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	o, _ := request.Parse(body)
	userID, _ := o.UserID("userId")
	if err := o.Check(); err != nil {
		web.Error(w, r, err)
		return
	}
	err = s.store.WithdrawUser(r.Context(), app.ID, userID)
	switch {
	case errors.Is(err, herald.ErrUserWithdrawn):
		err = herald.ErrWithdrawWithdrawn
	case errors.Is(err, herald.ErrUserNotFound):
		err = herald.ErrWithdrawNoUser
	}
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, map[string]string{"message": "The withdrawal process has been executed."})
}
