package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
)

// TestScheduleTimeZone checks, over real HTTP, that a scheduled push
// answers X-Scheduled-At (the instant its scheduleTime was read as, in the
// app's zone, in UTC) and that a scheduleTime under 60 s away is refused
// with the app's zone and its local time now (DESIGN.md section 5). The
// request is received at 13:04:30 UTC.
func TestScheduleTimeZone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, zone, scheduleTime string
		wantAt, wantReason       string // wantAt empty: refused with wantReason
	}{
		{"Seoul", "Asia/Seoul", "2025-06-11T22:06", "2025-06-11T13:06:00Z", ""},
		{"Berlin", "Europe/Berlin", "2025-06-11T15:06", "2025-06-11T13:06:00Z", ""},
		{"ErrSeoulTooSoon", "Asia/Seoul", "2025-06-11T22:05", "",
			"must be at least 60 seconds after the request: it is read in the app's time zone, Asia/Seoul, where it is now 2025-06-11T22:04:30"},
		{"ErrBerlinReadAsUTC", "Europe/Berlin", "2025-06-11T13:10", "",
			"must be at least 60 seconds after the request: it is read in the app's time zone, Europe/Berlin, where it is now 2025-06-11T15:04:30"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := newFakeAPI()
			a.app.TimeZone = tt.zone
			srv := httptest.NewServer(a.h)
			defer srv.Close()
			body := `{"userIds":["u1"],"title":"t","content":"c","options":{"scheduleTime":"` + tt.scheduleTime + `"}}`
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/push/v2/users", strings.NewReader(body))
			req.Header.Set("x-api-key", a.app.APIKey)
			req.Header.Set("x-secret-key", a.secret)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var answer json.RawMessage
			json.NewDecoder(resp.Body).Decode(&answer)
			got := resp.Header.Get("X-Scheduled-At")
			if tt.wantAt != "" {
				if resp.StatusCode != http.StatusOK || got != tt.wantAt || string(answer) != `"Push has been scheduled successfully."` {
					t.Errorf("got %d %s X-Scheduled-At %q, want 200 X-Scheduled-At %q", resp.StatusCode, answer, got, tt.wantAt)
				}
				return
			}
			var e struct {
				Code    string
				Details []herald.Detail
			}
			json.Unmarshal(answer, &e)
			want := herald.Detail{Field: "options.scheduleTime", Reason: tt.wantReason}
			if resp.StatusCode != http.StatusBadRequest || len(e.Details) != 1 || e.Details[0] != want || got != "" {
				t.Errorf("got %d %s (X-Scheduled-At %q), want 400 with %+v", resp.StatusCode, answer, got, want)
			}
			if calls := a.take(); len(calls) > 0 {
				t.Errorf("a refused push asked for %+v", calls)
			}
		})
	}
}
