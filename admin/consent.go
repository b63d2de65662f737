package admin

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/web"
)

// flip is one item of a pair before and after a change.
type flip struct {
	From bool `json:"from"`
	To   bool `json:"to"`
}

// consentChangeJSON is one entry of a consent history (DESIGN section 7).
type consentChangeJSON struct {
	At             time.Time            `json:"at"`
	Source         herald.ConsentSource `json:"source"`
	DeviceID       *string              `json:"deviceId"`
	Marketing      flip                 `json:"marketing"`
	MarketingNight flip                 `json:"marketingNight"`
}

func consentChangesJSON(recs []herald.ConsentRecord) []consentChangeJSON {
	out := make([]consentChangeJSON, len(recs))
	for i, r := range recs {
		out[i] = consentChangeJSON{At: r.At, Source: r.Source, DeviceID: r.DeviceID,
			Marketing:      flip{r.From.Marketing, r.To.Marketing},
			MarketingNight: flip{r.From.MarketingNight, r.To.MarketingNight}}
	}
	return out
}

// userError turns the store's user errors into the admin API's: 404 for
// a user never registered; a pair the user's cannot take names the member
// of the admin body (the store names it as in the Server API's "state").
func userError(err error) error {
	if errors.Is(err, herald.ErrUserNotFound) {
		return herald.ErrNotFound
	}
	if e := herald.AsError(err); e != nil && e.Code == herald.ErrInvalidRequest.Code {
		details := make([]herald.Detail, len(e.Details))
		for i, d := range e.Details {
			details[i] = herald.Detail{Field: strings.TrimPrefix(d.Field, "state."), Reason: d.Reason}
		}
		return herald.Invalid(details...)
	}
	return err
}

// getConsentHistory is GET /admin/v1/apps/{appId}/users/{userId}/consent-history.
func (s *server) getConsentHistory(w http.ResponseWriter, r *http.Request) {
	userID := r.PathValue("userId")
	recs, err := s.Store.ConsentHistory(r.Context(), r.PathValue("appId"), userID)
	if err != nil {
		web.Error(w, r, userError(err))
		return
	}
	access.NoteOf(r.Context()).ShowedUsers(userID)
	web.JSON(w, http.StatusOK, map[string]any{"userId": userID, "changes": consentChangesJSON(recs)})
}

// consentRequest is the body of PATCH …/users/{userId}/consent: shapes A,
// B and C of spec 2.2, as on the Server API.
type consentRequest struct {
	Marketing      *bool `json:"marketing"`
	MarketingNight *bool `json:"marketingNight"`
}

// patchUserConsent is PATCH /admin/v1/apps/{appId}/users/{userId}/consent:
// the operator sets a user's pair (consent given by phone or in writing,
// say), recorded with source admin. A withdrawn user answers 410, as on
// the Server API.
func (s *server) patchUserConsent(w http.ResponseWriter, r *http.Request) {
	var q consentRequest
	if err := decode(r, &q); err != nil {
		web.Error(w, r, err)
		return
	}
	change := herald.ConsentChange{Marketing: q.Marketing, MarketingNight: q.MarketingNight, Source: herald.SourceAdmin}
	if d := change.Shape(""); d != nil {
		web.Error(w, r, herald.Invalid(d...))
		return
	}
	userID := r.PathValue("userId")
	c, err := s.Store.SetUserConsent(r.Context(), r.PathValue("appId"), userID, change)
	if errors.Is(err, herald.ErrUserWithdrawn) {
		err = herald.ErrMarketingWithdrawn
	}
	if err != nil {
		web.Error(w, r, userError(err))
		return
	}
	access.NoteOf(r.Context()).ShowedUsers(userID)
	web.JSON(w, http.StatusOK, map[string]any{"userId": userID, "marketing": c.Marketing, "marketingNight": c.MarketingNight})
}

// consentDueJSON is one user of the consent-due list.
type consentDueJSON struct {
	UserID         string    `json:"userId"`
	Marketing      bool      `json:"marketing"`
	MarketingNight bool      `json:"marketingNight"`
	ConfirmedAt    time.Time `json:"confirmedAt"`
	DueAt          time.Time `json:"dueAt"`
}

// Limits of a consent-due page.
const (
	dueLimit    = 100
	maxDueLimit = 1000
)

// dueQuery is a request for the consent-due list.
type dueQuery struct {
	Until  time.Time
	Limit  int
	Cursor string
}

// parseDueQuery reads within, limit and cursor; until is now plus within.
func parseDueQuery(r *http.Request, now time.Time) (dueQuery, error) {
	q := r.URL.Query()
	within, reason := herald.ParseDueWithin(q.Get("within"))
	if reason != "" {
		return dueQuery{}, herald.Invalid(herald.Detail{Field: "within", Reason: reason})
	}
	out := dueQuery{Until: now.Add(within), Limit: dueLimit, Cursor: q.Get("cursor")}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > maxDueLimit {
			return dueQuery{}, herald.Invalid(herald.Detail{Field: "limit", Reason: "must be an integer from 1 to 1000"})
		}
		out.Limit = n
	}
	return out, nil
}

// getConsentDue is GET /admin/v1/apps/{appId}/consent-due?within=30d: the
// users whose marketing consent must be confirmed again by now plus
// within, soonest due first, a page at a time.
func (s *server) getConsentDue(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.app(w, r); !ok {
		return
	}
	q, err := parseDueQuery(r, s.Now())
	if err != nil {
		web.Error(w, r, err)
		return
	}
	ds, next, err := s.Store.ConsentDue(r.Context(), r.PathValue("appId"), q.Until, q.Limit, q.Cursor)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	note := access.NoteOf(r.Context())
	out := make([]consentDueJSON, len(ds))
	for i, d := range ds {
		note.ShowedUsers(d.UserID)
		out[i] = consentDueJSON{UserID: d.UserID, Marketing: d.Consent.Marketing, MarketingNight: d.Consent.MarketingNight,
			ConfirmedAt: d.ConfirmedAt, DueAt: d.DueAt}
	}
	web.JSON(w, http.StatusOK, map[string]any{"users": out, "nextCursor": orNil(next)})
}
