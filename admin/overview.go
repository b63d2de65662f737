package admin

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/web"
)

// overviewJSON is the answer of GET /admin/v1/apps/{appId}/overview.
type overviewJSON struct {
	AppID          string    `json:"appId"`
	From           time.Time `json:"from"`
	To             time.Time `json:"to"`
	Pushes         int       `json:"pushes"`
	RequestedUsers int       `json:"requestedUsers"`
	Sent           int       `json:"sent"`
	Failed         int       `json:"failed"`
	Unreachable    int       `json:"unreachable"`
	Received       int       `json:"received"`
	Opened         int       `json:"opened"`
	// OpenRate is opened / sent, null when nothing was sent.
	OpenRate      *float64 `json:"openRate"`
	ServerActions float64  `json:"serverActions"`
}

func overviewToJSON(appID string, t herald.PushTotals) overviewJSON {
	c := t.Counts
	o := overviewJSON{AppID: appID, From: t.From, To: t.To, Pushes: t.Pushes, RequestedUsers: c.RequestedUsers,
		Sent: c.Sent, Failed: c.Failed, Unreachable: c.Unreachable, Received: c.Received, Opened: c.Opened,
		ServerActions: herald.ServerActions(t.ServerActionsHalf)}
	if rate, ok := c.OpenRate(); ok {
		o.OpenRate = &rate
	}
	return o
}

// overviewDays reads the days parameter: 1, 7 or 30, 7 when absent.
func overviewDays(q url.Values) (int, error) {
	v := q.Get("days")
	if v == "" {
		return herald.DefaultOverviewDays, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || !slices.Contains(herald.OverviewDays, n) {
		return 0, herald.Invalid(herald.Detail{Field: "days", Reason: "must be 1, 7 or 30"})
	}
	return n, nil
}

// totals sums the app's pushes of the last days.
func (s *server) totals(ctx context.Context, appID string, days int) (herald.PushTotals, error) {
	from, to, _ := herald.OverviewWindow(days, s.Now())
	return s.Store.PushTotals(ctx, appID, from, to)
}

// getOverview is GET /admin/v1/apps/{appId}/overview?days=1|7|30.
func (s *server) getOverview(w http.ResponseWriter, r *http.Request) {
	a, ok := s.app(w, r)
	if !ok {
		return
	}
	days, err := overviewDays(r.URL.Query())
	if err != nil {
		web.Error(w, r, err)
		return
	}
	t, err := s.totals(r.Context(), a.ID, days)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, overviewToJSON(a.ID, t))
}
