package api

import (
	"errors"
	"net/http"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/request"
	"github.com/heraldpush/herald/web"
)

// errTokenNotFound answers a removal of a token no device holds.
var errTokenNotFound = &herald.Error{Code: herald.ErrNotFound.Code, Status: http.StatusNotFound, Message: "Push token not found."}

// deletePushToken is DELETE /api/push-token/v2 (spec 4.5): the app's back
// end removes one token mapping.
func (s *server) deletePushToken(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r, request.DefaultBodyLimit)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	o, _ := request.Parse(body)
	token, _ := o.Str("token", true, 4096)
	if err := o.Check(); err != nil {
		web.Error(w, r, err)
		return
	}
	err = s.store.DeleteToken(r.Context(), appFrom(r.Context()).ID, token)
	if errors.Is(err, herald.ErrNotFound) {
		err = errTokenNotFound
	}
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, map[string]string{"message": "The push token has been removed."})
}
