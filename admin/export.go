package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/web"
)

// exportJSON is a user's export (DESIGN 12): all Herald holds on the user.
type exportJSON struct {
	UserID         string              `json:"userId"`
	State          herald.UserState    `json:"state"`
	Marketing      bool                `json:"marketing"`
	MarketingNight bool                `json:"marketingNight"`
	ExportedAt     time.Time           `json:"exportedAt"`
	ConsentHistory []consentChangeJSON `json:"consentHistory"`
	Tags           audience.Tags       `json:"tags"`
	Devices        []exportDeviceJSON  `json:"devices"`
	Pushes         []exportPushJSON    `json:"pushes"`
}

// exportDeviceJSON is a device of the export: the token's last 8
// characters only, never the token.
type exportDeviceJSON struct {
	DeviceID         string          `json:"deviceId"`
	Platform         herald.Platform `json:"platform"`
	AppSourceVersion string          `json:"appSourceVersion"`
	TokenSuffix      string          `json:"tokenSuffix"`
	CreatedAt        time.Time       `json:"createdAt"`
	Locale           string          `json:"locale,omitempty"`
	TimeZone         string          `json:"timeZone,omitempty"`
	LastSeenAt       time.Time       `json:"lastSeenAt"`
}

// exportPushJSON is a push of the export.
type exportPushJSON struct {
	PushID     string         `json:"pushId"`
	At         time.Time      `json:"at"`
	Title      *string        `json:"title"`
	Outcome    herald.Outcome `json:"outcome"`
	ReceivedAt *time.Time     `json:"receivedAt"`
	OpenedAt   *time.Time     `json:"openedAt"`
}

// getUserExport is GET /admin/v1/apps/{appId}/users/{userId}/export?reason=…:
// a user's data on request (PIPA art. 35), offered as a download.
func (s *server) getUserExport(w http.ResponseWriter, r *http.Request) {
	if d := herald.DownloadReasonProblem(r.URL.Query().Get("reason")); d != nil {
		web.Error(w, r, herald.Invalid(*d))
		return
	}
	note := access.NoteOf(r.Context())
	note.DownloadReason(strings.TrimSpace(r.URL.Query().Get("reason")))
	out, err := s.userExport(r.Context(), r.PathValue("appId"), r.PathValue("userId"))
	if err != nil {
		web.Error(w, r, userError(err))
		return
	}
	note.ShowedUsers(out.UserID)
	w.Header().Set("Content-Disposition", `attachment; filename="`+exportFileName(out.UserID)+`"`)
	web.JSON(w, http.StatusOK, out)
}

// userExport reads a user's export: ErrUserNotFound for a user never
// registered (an unknown app has none).
func (s *server) userExport(ctx context.Context, appID, userID string) (exportJSON, error) {
	u, devices, err := s.Store.User(ctx, appID, userID)
	if err != nil {
		return exportJSON{}, err
	}
	trail, err := s.Store.ConsentHistory(ctx, appID, userID)
	if err != nil {
		return exportJSON{}, err
	}
	pushes, err := s.Store.UserPushes(ctx, appID, userID)
	if err != nil {
		return exportJSON{}, err
	}
	tags, err := s.Store.UserTags(ctx, appID, userID)
	if err != nil {
		return exportJSON{}, err
	}
	out := exportJSON{UserID: u.ID, State: u.State, Marketing: u.Consent.Marketing, MarketingNight: u.Consent.MarketingNight,
		ExportedAt: s.Now().UTC(), ConsentHistory: consentChangesJSON(trail), Tags: tags,
		Devices: make([]exportDeviceJSON, len(devices)), Pushes: make([]exportPushJSON, len(pushes))}
	for i, d := range devices {
		out.Devices[i] = exportDeviceJSON{DeviceID: d.ID, Platform: d.Platform, AppSourceVersion: d.AppSourceVersion,
			TokenSuffix: herald.TokenSuffix(d.Token), CreatedAt: d.CreatedAt.UTC(), Locale: d.Locale, TimeZone: d.TimeZone,
			LastSeenAt: d.LastSeenAt.UTC()}
	}
	for i, p := range pushes {
		out.Pushes[i] = exportPushJSON{PushID: p.PushID, At: p.At, Title: p.Title, Outcome: p.Outcome,
			ReceivedAt: p.ReceivedAt, OpenedAt: p.OpenedAt}
	}
	return out, nil
}

// exportFileName names a user's export download.
func exportFileName(userID string) string { return "herald-user-" + safeFileName(userID) + ".json" }

// safeFileName is an id as a download's file name has it: anything but
// letters, digits, '-' and '_' replaced, so the header stays one quoted
// value.
func safeFileName(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// dashboardExport is GET /apps/{appId}/users/export?userId=…&reason=…:
// the user page's download of the user's export. A reason refused shows
// the user page again, naming it.
func (d *dashboard) dashboardExport(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	data := &userData{UserID: strings.TrimSpace(q.Get("userId")), Reason: q.Get("reason")}
	v := viewOf("Users", a, data)
	err := error(nil)
	if p := herald.DownloadReasonProblem(data.Reason); p != nil {
		err = herald.Invalid(*p)
	}
	var out exportJSON
	if err == nil {
		access.NoteOf(r.Context()).DownloadReason(strings.TrimSpace(data.Reason))
		out, err = d.userExport(r.Context(), a.ID, data.UserID)
	}
	if err != nil {
		if lerr := d.loadUser(r, a, data); lerr != nil {
			err = lerr
		}
		if errors.Is(err, herald.ErrUserNotFound) {
			err = herald.ErrNotFound
		}
		d.failOn(w, r, err, "user", v)
		return
	}
	access.NoteOf(r.Context()).ShowedUsers(out.UserID)
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		d.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+exportFileName(out.UserID)+`"`)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(append(b, '\n'))
}
