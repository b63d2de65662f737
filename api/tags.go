package api

import (
	"errors"
	"net/http"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/request"
	"github.com/heraldpush/herald/web"
)

// tagsAnswer is the answer of both tag updates: the user's tags after it.
type tagsAnswer struct {
	DeviceID string        `json:"deviceId,omitempty"`
	UserID   string        `json:"userId"`
	Tags     audience.Tags `json:"tags"`
}

// readTags reads a tag update's tags member (DESIGN 13).
func readTags(o request.Object, details *[]herald.Detail) map[string]*audience.Value {
	raw, ok := o.Raw("tags")
	if !ok {
		o.Fail("tags", "is required")
		return nil
	}
	set, problems := audience.ParseTagUpdate(raw, "tags")
	*details = append(*details, problems...)
	return set
}

// setTags is PUT /api/app-user/v2/tags: a user's tags set (null deletes
// one), the others kept.
func (s *server) setTags(w http.ResponseWriter, r *http.Request) {
	app := appFrom(r.Context())
	body, err := readBody(r, request.DefaultBodyLimit)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	o, details := request.Parse(body)
	userID, _ := o.UserID("userId")
	set := readTags(o, details)
	if err := o.Check(); err != nil {
		web.Error(w, r, err)
		return
	}
	tags, err := s.store.SetTags(r.Context(), app.ID, userID, set)
	switch {
	case errors.Is(err, herald.ErrUserWithdrawn):
		err = herald.ErrTagsWithdrawn
	case errors.Is(err, herald.ErrUserNotFound):
		err = herald.ErrTagsNoUser
	}
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, tagsAnswer{UserID: userID, Tags: tags})
}

// setDeviceTags is PATCH /api/sdk/v2/tags: the tags of the device's user.
// With the app's identity verification on, it needs that user's
// identityToken.
func (s *server) setDeviceTags(w http.ResponseWriter, r *http.Request) {
	o, details, deviceID, err := sdkObject(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	set := readTags(o, details)
	err = request.Invalid(details)
	var identity *herald.IdentityProof
	if err == nil {
		// As for consent: the token is checked against the device's user
		// by the store, in the transaction that writes the tags.
		identity, err = s.identityProof(r, o)
	}
	if err != nil {
		web.Error(w, r, err)
		return
	}
	userID, tags, err := s.store.SetDeviceTags(r.Context(), appFrom(r.Context()).ID, deviceID, set, identity)
	switch {
	case errors.Is(err, herald.ErrIdentityRefused):
		err = s.refuseIdentity(r)
	case errors.Is(err, herald.ErrDeviceUnmapped):
		err = herald.ErrTagsUnmapped
	case errors.Is(err, herald.ErrUserWithdrawn):
		err = herald.ErrTagsWithdrawn // withdrawn while the device was being read
	case errors.Is(err, herald.ErrUserNotFound):
		err = herald.ErrTagsNoUser
	}
	if err != nil {
		web.Error(w, r, deviceError(s.sdkError(r, err)))
		return
	}
	web.JSON(w, http.StatusOK, tagsAnswer{DeviceID: deviceID, UserID: userID, Tags: tags})
}
