package admin

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/web"
)

type deviceJSON struct {
	DeviceID         string          `json:"deviceId"`
	Platform         herald.Platform `json:"platform"`
	AppSourceVersion string          `json:"appSourceVersion"`
	TokenSuffix      string          `json:"tokenSuffix"`
	Marketing        bool            `json:"marketing"`
	MarketingNight   bool            `json:"marketingNight"`
	Topics           []string        `json:"topics"`
	// Locale and TimeZone are what the device reported (DESIGN 13),
	// absent when it reported none; LastSeenAt when it last registered
	// or reported an event.
	Locale     string    `json:"locale,omitempty"`
	TimeZone   string    `json:"timeZone,omitempty"`
	LastSeenAt time.Time `json:"lastSeenAt"`
}

func (s *server) getUser(w http.ResponseWriter, r *http.Request) {
	u, devices, err := s.Store.User(r.Context(), r.PathValue("appId"), r.PathValue("userId"))
	if errors.Is(err, herald.ErrUserNotFound) {
		err = herald.ErrNotFound
	}
	if err != nil {
		web.Error(w, r, err)
		return
	}
	tags, err := s.Store.UserTags(r.Context(), u.AppID, u.ID)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	access.NoteOf(r.Context()).ShowedUsers(u.ID)
	out := make([]deviceJSON, len(devices))
	for i, d := range devices {
		out[i] = deviceJSON{DeviceID: d.ID, Platform: d.Platform, AppSourceVersion: d.AppSourceVersion,
			TokenSuffix: herald.TokenSuffix(d.Token), Marketing: d.Consent.Marketing,
			MarketingNight: d.Consent.MarketingNight, Topics: d.Topics, Locale: d.Locale, TimeZone: d.TimeZone, LastSeenAt: d.LastSeenAt}
	}
	web.JSON(w, http.StatusOK, map[string]any{
		"userId": u.ID, "state": u.State, "marketing": u.Consent.Marketing,
		"marketingNight": u.Consent.MarketingNight, "devices": out, "tags": tags,
	})
}

// putUserTags is PUT /admin/v1/apps/{appId}/users/{userId}/tags: the
// operator sets a user's tags as the Server API does (null deletes one,
// the others kept). A withdrawn user answers 410, as there.
func (s *server) putUserTags(w http.ResponseWriter, r *http.Request) {
	var q struct {
		Tags json.RawMessage `json:"tags"`
	}
	if err := decode(r, &q); err != nil {
		web.Error(w, r, err)
		return
	}
	if q.Tags == nil {
		web.Error(w, r, herald.Invalid(herald.Detail{Field: "tags", Reason: "is required"}))
		return
	}
	set, problems := audience.ParseTagUpdate(q.Tags, "tags")
	if problems != nil {
		web.Error(w, r, herald.Invalid(problems...))
		return
	}
	userID := r.PathValue("userId")
	tags, err := s.Store.SetTags(r.Context(), r.PathValue("appId"), userID, set)
	if errors.Is(err, herald.ErrUserWithdrawn) {
		err = herald.ErrTagsWithdrawn
	}
	if err != nil {
		web.Error(w, r, userError(err))
		return
	}
	access.NoteOf(r.Context()).ShowedUsers(userID)
	web.JSON(w, http.StatusOK, map[string]any{"userId": userID, "tags": tags})
}
