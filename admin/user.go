package admin

import (
	"errors"
	"net/http"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
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
	access.NoteOf(r.Context()).ShowedUsers(u.ID)
	out := make([]deviceJSON, len(devices))
	for i, d := range devices {
		out[i] = deviceJSON{DeviceID: d.ID, Platform: d.Platform, AppSourceVersion: d.AppSourceVersion,
			TokenSuffix: herald.TokenSuffix(d.Token), Marketing: d.Consent.Marketing,
			MarketingNight: d.Consent.MarketingNight, Topics: d.Topics, Locale: d.Locale, TimeZone: d.TimeZone, LastSeenAt: d.LastSeenAt}
	}
	web.JSON(w, http.StatusOK, map[string]any{
		"userId": u.ID, "state": u.State, "marketing": u.Consent.Marketing,
		"marketingNight": u.Consent.MarketingNight, "devices": out,
	})
}
