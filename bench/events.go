package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/heraldpush/herald/client"
)

// Events is the events phase (Options.OpenRate): after delivery, every
// simulated device reports through the SDK API (POST /api/sdk/v2/events)
// that it received the push it got, and a fraction OpenRate of them that
// they opened it too, in the same request.
type Events struct {
	OpenRate float64 `json:"openRate"`
	Workers  int     `json:"workers"`
	Requests int     `json:"requests"`
	// Events is every event sent; Accepted and Ignored the server's
	// answers (every one should be accepted).
	Events   int `json:"events"`
	Accepted int `json:"accepted"`
	Ignored  int `json:"ignored"`
	// Seconds is the phase from the first request to the last answer;
	// PerSecond the events per second over it.
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"perSecond"`
	P50MS     float64 `json:"p50Ms"`
	P99MS     float64 `json:"p99Ms"`
	MaxMS     float64 `json:"maxMs"`
	// Received and Opened are the pushes' counts summed, read through the
	// admin API after the phase.
	Received int `json:"received"`
	Opened   int `json:"opened"`
	// ServerCPUSeconds is the server's CPU time over the phase;
	// ServerCPUSecondsPer1000Events divides it by the thousands of events.
	ServerCPUSeconds              float64 `json:"serverCpuSeconds"`
	ServerCPUSecondsPer1000Events float64 `json:"serverCpuSecondsPer1000Events"`
}

// opens reports whether user i opens its push at open rate f: the users
// who do are spread evenly, round(f × users) of them.
func opens(i int, f float64) bool { return int(float64(i+1)*f) > int(float64(i)*f) }

// reportEvents runs the events phase and checks that every event counted.
func (r *runner) reportEvents(ctx context.Context) (Events, error) {
	f, users := r.opts.OpenRate, r.opts.Users
	ev := Events{OpenRate: f, Workers: r.opts.EventWorkers, Requests: users}
	pushIDs, err := pushIDsOf(r, users)
	if err != nil {
		return ev, err
	}
	for i := range users {
		ev.Events++
		if opens(i, f) {
			ev.Events++
		}
	}
	server, _ := r.meters()
	if err := server.begin(); err != nil {
		return ev, fmt.Errorf("bench: read usage: %w", err)
	}
	fmt.Fprintf(r.opts.Progress, "bench: %d devices reporting %d events (open rate %g, %d workers)\n", users, ev.Events, f, ev.Workers)
	latencies := make([]time.Duration, users)
	var accepted, ignored atomic.Int64
	start := time.Now()
	err = forEach(ctx, users, ev.Workers, func(ctx context.Context, i int) error {
		events := []client.Event{{PushID: pushIDs[i], Type: "received"}}
		if opens(i, f) {
			events = append(events, client.Event{PushID: pushIDs[i], Type: "opened"})
		}
		t0 := time.Now()
		res, err := r.app.clients[i%len(r.app.clients)].ReportEvents(ctx, deviceOf(i), events)
		latencies[i] = time.Since(t0)
		if err != nil {
			return fmt.Errorf("bench: events of user %d: %w", i, err)
		}
		accepted.Add(int64(res.Accepted))
		ignored.Add(int64(res.Ignored))
		return nil
	})
	elapsed := time.Since(start)
	ev.Seconds, ev.PerSecond = elapsed.Seconds(), float64(ev.Events)/elapsed.Seconds()
	ev.Accepted, ev.Ignored = int(accepted.Load()), int(ignored.Load())
	a := summarize(latencies, ev.Workers)
	ev.P50MS, ev.P99MS, ev.MaxMS = a.P50MS, a.P99MS, a.MaxMS
	u, uerr := server.finish(ev.Events)
	ev.ServerCPUSeconds, ev.ServerCPUSecondsPer1000Events = u.CPUSeconds, u.CPUSecondsPer1000Deliveries
	if err = errors.Join(err, uerr); err != nil {
		return ev, err
	}
	if ev.Received, ev.Opened, err = r.eventCounts(ctx); err != nil {
		return ev, err
	}
	if ev.Accepted != ev.Events || ev.Received != users || ev.Opened != ev.Events-users {
		return ev, fmt.Errorf("bench: %d events sent, %d accepted, %d ignored; counts received %d, opened %d, want %d, %d",
			ev.Events, ev.Accepted, ev.Ignored, ev.Received, ev.Opened, users, ev.Events-users)
	}
	return ev, nil
}

// pushIDsOf returns the id of the push each user's device got, read from
// the message the emulator has for it (data.pushId).
func pushIDsOf(r *runner, users int) ([]string, error) {
	ids := make([]string, users)
	for i := range users {
		msgs := r.emu.Messages(tokenOf(i))
		if len(msgs) == 0 {
			return nil, fmt.Errorf("bench: no message for user %d", i)
		}
		var m struct {
			Data struct {
				PushID string `json:"pushId"`
			} `json:"data"`
		}
		if err := json.Unmarshal(msgs[0].Message, &m); err != nil || m.Data.PushID == "" {
			return nil, fmt.Errorf("bench: message of user %d has no pushId (%v)", i, err)
		}
		ids[i] = m.Data.PushID
	}
	return ids, nil
}

// eventCounts sums the received and opened counts of the bench app's
// pushes, through the admin API's history, page by page.
func (r *runner) eventCounts(ctx context.Context) (received, opened int, err error) {
	admin := adminClient{base: r.srv.AdminURL, token: r.srv.AdminToken, hc: &http.Client{Timeout: 60 * time.Second}}
	cursor := ""
	for range 100000 { // bounded: a page holds 200 of at most users/1 pushes
		var page struct {
			Pushes []struct {
				Counts struct {
					Received int `json:"received"`
					Opened   int `json:"opened"`
				} `json:"counts"`
			} `json:"pushes"`
			NextCursor *string `json:"nextCursor"`
		}
		path := "/admin/v1/apps/" + r.app.id + "/pushes?limit=200"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if err := admin.do(ctx, http.MethodGet, path, nil, http.StatusOK, &page); err != nil {
			return 0, 0, err
		}
		for _, p := range page.Pushes {
			received += p.Counts.Received
			opened += p.Counts.Opened
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			return received, opened, nil
		}
		cursor = *page.NextCursor
	}
	return 0, 0, errors.New("bench: the history did not end")
}
