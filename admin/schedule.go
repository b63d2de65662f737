package admin

import (
	"encoding/json"
	"net/http"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/render"
	"github.com/heraldpush/herald/web"
)

// pushEdit is the body of PATCH /admin/v1/pushes/{pushId}.
type pushEdit struct {
	Title        *string `json:"title"`
	Content      *string `json:"content"`
	LinkURL      *string `json:"linkURL"`
	ImageURL     *string `json:"imageURL"`
	IsUsingBadge *bool   `json:"isUsingBadge"`
	ScheduleTime *string `json:"scheduleTime"`
	// Localized replaces the push's localized entries; null or {}
	// removes them.
	Localized json.RawMessage `json:"localized"`
}

func (s *server) patchPush(w http.ResponseWriter, r *http.Request) {
	p, err := s.guard.PushOf(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	var body pushEdit
	if err := decode(r, &body); err != nil {
		web.Error(w, r, err)
		return
	}
	app, err := s.Store.App(r.Context(), p.AppID)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	c := herald.PushChange{Title: body.Title, Content: body.Content, LinkURL: body.LinkURL, ImageURL: body.ImageURL, Badge: body.IsUsingBadge,
		AdPrefixRequired: !app.NoAdPrefixCheck, App: &app}
	details := judgeEdit(p, &c, body.Localized)
	if body.ScheduleTime != nil {
		t, reason := herald.ParseScheduleTime(*body.ScheduleTime, app.Location(), s.Now())
		if reason != "" {
			details = append(details, herald.Detail{Field: "scheduleTime", Reason: reason})
		}
		if p.LocalTime { // its new wall-clock time, from the first zone's
			t = herald.LocalStart(t, app.Location())
		}
		c.ScheduledAt = &t
	}
	if len(details) > 0 {
		web.Error(w, r, herald.Invalid(details...))
		return
	}
	p, err = s.Delivery.EditScheduled(r.Context(), p.ID, c)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	s.writePush(w, r, p)
}

func (s *server) cancelPush(w http.ResponseWriter, r *http.Request) {
	p, err := s.Delivery.CancelScheduled(r.Context(), r.PathValue("pushId"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	s.writePush(w, r, p)
}

// releasePush is POST /admin/v1/pushes/{pushId}/release: a push held by a
// restore goes on where it stood (DESIGN 12).
func (s *server) releasePush(w http.ResponseWriter, r *http.Request) {
	p, err := s.Delivery.Release(r.Context(), r.PathValue("pushId"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	s.writePush(w, r, p)
}

// writePush answers the push as stored now, with its counts.
func (s *server) writePush(w http.ResponseWriter, r *http.Request, p herald.Push) {
	stored, err := s.Store.Push(r.Context(), p.ID)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	access.NoteOf(r.Context()).About(stored.AppID, "")
	a, err := s.shownApp(r.Context(), stored)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, pushToJSON(a, stored))
}

// judgeEdit judges an edit of p as both the admin API and the dashboard
// make it: PushChange.Problems, the title and content as templates, and
// the localized entries, raw as posted (nil: not changed), which it sets
// in c. It returns every problem.
func judgeEdit(p herald.Push, c *herald.PushChange, localized json.RawMessage) []herald.Detail {
	details := c.Problems()
	if !p.Rule().PerRecipient { // a message of /messages is its writer's text, no template
		for _, m := range []struct {
			name string
			text *string
		}{{"title", c.Title}, {"content", c.Content}} {
			if m.text != nil {
				details = append(details, render.Check(*m.text, m.name)...)
			}
		}
	}
	if localized != nil {
		if p.Rule().PerRecipient {
			details = append(details, herald.Detail{Field: "localized", Reason: "a push of /messages has no localized entries: each message is its writer's text"})
		} else {
			l, problems := render.ParseLocalized(localized, "localized", 0, 0)
			entries := l.Entries()
			c.Localized, details = &entries, append(details, problems...)
		}
	}
	return details
}
