package admin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/request"
	"github.com/heraldpush/herald/web"
)

// runReconfirmation is POST /admin/v1/apps/{appId}/reconfirmation/run:
// the run of 10:00, at once.
func (s *server) runReconfirmation(w http.ResponseWriter, r *http.Request) {
	a, ok := s.app(w, r)
	if !ok {
		return
	}
	if !a.Reconfirmation.Enabled || s.Delivery == nil {
		web.Error(w, r, herald.ErrReconfirmationOff)
		return
	}
	n, id, _, err := s.Delivery.Reconfirm(r.Context(), a, "")
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := struct {
		Notified int     `json:"notified"`
		PushID   *string `json:"pushId"`
	}{Notified: n}
	if id != "" {
		out.PushID = &id
	}
	web.JSON(w, http.StatusOK, out)
}

// importEntry is one user of a consent import.
type importEntry struct {
	UserID         json.RawMessage `json:"userId"`
	Marketing      *bool           `json:"marketing"`
	MarketingNight *bool           `json:"marketingNight"`
	At             *string         `json:"at"`
}

// importEntries reads the users of a consent import body, each judged on
// its own so that a problem names its entry (users[3].at).
func importEntries(body []byte) ([]herald.ConsentImport, error) {
	var q struct {
		Users *[]json.RawMessage `json:"users"`
	}
	if err := decodeBody(body, &q); err != nil {
		return nil, err
	}
	switch {
	case q.Users == nil:
		return nil, herald.Invalid(herald.Detail{Field: "users", Reason: "is required"})
	case len(*q.Users) == 0 || len(*q.Users) > herald.MaxImport:
		return nil, herald.Invalid(herald.Detail{Field: "users", Reason: fmt.Sprintf("must hold 1 to %d entries", herald.MaxImport)})
	}
	out := make([]herald.ConsentImport, 0, len(*q.Users))
	var details []herald.Detail
	for i, raw := range *q.Users {
		e, d := importEntryOf(raw, fmt.Sprintf("users[%d]", i))
		details = append(details, d...)
		out = append(out, e)
	}
	if len(details) > 0 {
		return nil, herald.Invalid(details...)
	}
	return out, nil
}

// importEntryOf judges one entry; field is its path.
func importEntryOf(raw json.RawMessage, field string) (herald.ConsentImport, []herald.Detail) {
	var q importEntry
	var e herald.ConsentImport
	if err := decodeBody(raw, &q); err != nil {
		var d []herald.Detail
		if he := herald.AsError(err); he != nil {
			for _, x := range he.Details {
				if x.Field == "body" {
					d = append(d, herald.Detail{Field: field, Reason: "must be an object {userId, marketing, marketingNight, at}"})
				} else {
					d = append(d, herald.Detail{Field: field + "." + x.Field, Reason: x.Reason})
				}
			}
		}
		return e, d
	}
	var d []herald.Detail
	if len(q.UserID) == 0 {
		d = append(d, herald.Detail{Field: field + ".userId", Reason: "is required"})
	} else if id, reason := request.ParseUserID(q.UserID); reason != "" {
		d = append(d, herald.Detail{Field: field + ".userId", Reason: reason})
	} else {
		e.UserID = id
	}
	// The pair is whole: a missing (or null) member is malformed, never
	// "keep the current value" as a PATCH of consent reads it.
	for _, m := range []struct {
		name string
		v    *bool
	}{{"marketing", q.Marketing}, {"marketingNight", q.MarketingNight}} {
		if m.v == nil {
			d = append(d, herald.Detail{Field: field + "." + m.name, Reason: "is required (true or false)"})
		}
	}
	if q.Marketing != nil && q.MarketingNight != nil {
		e.Consent = herald.Consent{Marketing: *q.Marketing, MarketingNight: *q.MarketingNight}
		d = append(d, herald.ConsentChange{Marketing: q.Marketing, MarketingNight: q.MarketingNight}.Shape(field)...)
	}
	if q.At == nil {
		d = append(d, herald.Detail{Field: field + ".at", Reason: "is required"})
	} else if at, err := time.Parse(time.RFC3339, strings.TrimSpace(*q.At)); err != nil || strings.TrimSpace(*q.At) != *q.At {
		d = append(d, herald.Detail{Field: field + ".at", Reason: "must be an RFC 3339 date-time such as 2024-03-01T09:00:00+09:00"})
	} else {
		e.At = at.UTC()
	}
	return e, d
}

// consentImport is POST /admin/v1/apps/{appId}/consent-import.
func (s *server) consentImport(w http.ResponseWriter, r *http.Request) {
	a, ok := s.app(w, r)
	if !ok {
		return
	}
	body, err := readBody(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	entries, err := importEntries(body)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	n, skipped, err := s.Store.ImportConsent(r.Context(), a.ID, entries, s.Now())
	if err != nil {
		web.Error(w, r, err)
		return
	}
	note := access.NoteOf(r.Context())
	for _, e := range entries {
		note.ShowedUsers(e.UserID)
	}
	web.JSON(w, http.StatusOK, map[string]any{"imported": n, "skipped": skipped})
}
