package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/web"
)

// segmentJSON is a segment as the admin API shows it.
type segmentJSON struct {
	SegmentID string          `json:"segmentId"`
	Name      string          `json:"name"`
	Filter    audience.Filter `json:"filter"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
}

func segmentOf(sg audience.Segment) segmentJSON {
	return segmentJSON{SegmentID: sg.ID, Name: sg.Name, Filter: sg.Filter, CreatedAt: sg.CreatedAt, UpdatedAt: sg.UpdatedAt}
}

// countJSON is an audience's exact count.
type countJSON struct {
	Users     int       `json:"users"`
	Devices   int       `json:"devices"`
	CountedAt time.Time `json:"countedAt"`
}

// readSegment reads a segment's body: a name and a filter, each checked.
func readSegment(r *http.Request) (string, audience.Filter, error) {
	var q struct {
		Name   *string         `json:"name"`
		Filter json.RawMessage `json:"filter"`
	}
	if err := decode(r, &q); err != nil {
		return "", audience.Filter{}, err
	}
	var details []herald.Detail
	name := ""
	if q.Name != nil {
		name = *q.Name
	}
	if d := audience.NameProblem(name); d != nil {
		details = append(details, *d)
	}
	f, problems := readFilter(q.Filter)
	details = append(details, problems...)
	if details != nil {
		return "", audience.Filter{}, herald.Invalid(details...)
	}
	return name, f, nil
}

// readFilter reads a required filter member.
func readFilter(raw json.RawMessage) (audience.Filter, []herald.Detail) {
	if raw == nil {
		return audience.Filter{}, []herald.Detail{{Field: "filter", Reason: "is required"}}
	}
	return audience.Parse(raw)
}

// appExists answers ErrNotFound for an app that is not there, so that a
// segment route names no segment of an unknown app.
func (s *server) appExists(ctx context.Context, appID string) error {
	_, err := s.Store.App(ctx, appID)
	return err
}

// createSegment is POST /admin/v1/apps/{appId}/segments.
func (s *server) createSegment(w http.ResponseWriter, r *http.Request) {
	name, f, err := readSegment(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	now := s.Now().UTC().Truncate(time.Millisecond)
	sg := audience.Segment{ID: herald.NewID("seg_", now), AppID: r.PathValue("appId"), Name: name, Filter: f, CreatedAt: now, UpdatedAt: now}
	if err := s.Store.CreateSegment(r.Context(), sg); err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusCreated, segmentOf(sg))
}

// listSegments is GET /admin/v1/apps/{appId}/segments.
func (s *server) listSegments(w http.ResponseWriter, r *http.Request) {
	appID := r.PathValue("appId")
	if err := s.appExists(r.Context(), appID); err != nil {
		web.Error(w, r, err)
		return
	}
	sgs, err := s.Store.Segments(r.Context(), appID)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := make([]segmentJSON, len(sgs))
	for i, sg := range sgs {
		out[i] = segmentOf(sg)
	}
	web.JSON(w, http.StatusOK, map[string]any{"segments": out})
}

// getSegment is GET /admin/v1/apps/{appId}/segments/{segmentId}.
func (s *server) getSegment(w http.ResponseWriter, r *http.Request) {
	sg, err := s.Store.Segment(r.Context(), r.PathValue("appId"), r.PathValue("segmentId"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, segmentOf(sg))
}

// putSegment is PUT /admin/v1/apps/{appId}/segments/{segmentId}: a new
// name and filter. A push accepted before keeps the filter it was
// accepted with.
func (s *server) putSegment(w http.ResponseWriter, r *http.Request) {
	name, f, err := readSegment(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	sg, err := s.Store.Segment(r.Context(), r.PathValue("appId"), r.PathValue("segmentId"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	sg.Name, sg.Filter, sg.UpdatedAt = name, f, s.Now().UTC().Truncate(time.Millisecond)
	if err := s.Store.UpdateSegment(r.Context(), sg); err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, segmentOf(sg))
}

// deleteSegment is DELETE /admin/v1/apps/{appId}/segments/{segmentId}.
func (s *server) deleteSegment(w http.ResponseWriter, r *http.Request) {
	if err := s.Store.DeleteSegment(r.Context(), r.PathValue("appId"), r.PathValue("segmentId")); err != nil {
		web.Error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// countSegment is GET /admin/v1/apps/{appId}/segments/{segmentId}/count:
// the users and devices its filter selects now, exactly.
func (s *server) countSegment(w http.ResponseWriter, r *http.Request) {
	sg, err := s.Store.Segment(r.Context(), r.PathValue("appId"), r.PathValue("segmentId"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	s.count(w, r, sg.AppID, sg.Filter)
}

// countAudience is POST /admin/v1/apps/{appId}/audience/count {filter}:
// what a filter selects now, before it is saved or sent.
func (s *server) countAudience(w http.ResponseWriter, r *http.Request) {
	var q struct {
		Filter json.RawMessage `json:"filter"`
	}
	if err := decode(r, &q); err != nil {
		web.Error(w, r, err)
		return
	}
	f, problems := readFilter(q.Filter)
	if problems != nil {
		web.Error(w, r, herald.Invalid(problems...))
		return
	}
	appID := r.PathValue("appId")
	if err := s.appExists(r.Context(), appID); err != nil {
		web.Error(w, r, err)
		return
	}
	s.count(w, r, appID, f)
}

// count answers a filter's count over the app's devices now.
func (s *server) count(w http.ResponseWriter, r *http.Request, appID string, f audience.Filter) {
	now := s.Now().UTC()
	c, err := s.Store.CountAudience(r.Context(), appID, f, now)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, countJSON{Users: c.Users, Devices: c.Devices, CountedAt: now.Truncate(time.Millisecond)})
}
