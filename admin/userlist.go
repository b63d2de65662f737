package admin

import (
	"net/http"
	"net/url"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/web"
)

// userRowJSON is one user of GET /admin/v1/apps/{appId}/users.
type userRowJSON struct {
	UserID         string           `json:"userId"`
	State          herald.UserState `json:"state"`
	Marketing      bool             `json:"marketing"`
	MarketingNight bool             `json:"marketingNight"`
	Devices        int              `json:"devices"`
	UpdatedAt      time.Time        `json:"updatedAt"`
}

// userFilterOf reads q, limit and cursor of a users list; the problems
// name each bad parameter.
func userFilterOf(q url.Values) (herald.UserFilter, []herald.Detail) {
	f := herald.UserFilter{Prefix: q.Get("q"), Cursor: q.Get("cursor"), Limit: herald.DefaultUserPage}
	var d []herald.Detail
	if !utf8.ValidString(f.Prefix) || utf8.RuneCountInString(f.Prefix) > herald.MaxUserIDLen {
		d = append(d, herald.Detail{Field: "q", Reason: "must be the start of a userId: at most 255 characters of valid UTF-8"})
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > herald.MaxUserPage {
			d = append(d, herald.Detail{Field: "limit", Reason: "must be an integer from 1 to 200"})
		}
		f.Limit = n
	}
	return f, d
}

// listUsers is GET /admin/v1/apps/{appId}/users: the app's users by
// userId, withdrawn ones included, a page at a time.
func (s *server) listUsers(w http.ResponseWriter, r *http.Request) {
	a, ok := s.app(w, r)
	if !ok {
		return
	}
	f, details := userFilterOf(r.URL.Query())
	if len(details) > 0 {
		web.Error(w, r, herald.Invalid(details...))
		return
	}
	us, next, err := s.Store.Users(r.Context(), a.ID, f)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	note := access.NoteOf(r.Context())
	out := make([]userRowJSON, len(us))
	for i, u := range us {
		note.ShowedUsers(u.ID)
		out[i] = userRowJSON{UserID: u.ID, State: u.State, Marketing: u.Consent.Marketing, MarketingNight: u.Consent.MarketingNight,
			Devices: u.Devices, UpdatedAt: u.UpdatedAt}
	}
	web.JSON(w, http.StatusOK, map[string]any{"users": out, "nextCursor": orNil(next)})
}
