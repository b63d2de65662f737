package api_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
)

// EnvMeasureEvents runs TestMeasureEvents, which reports figures and
// asserts none: HERALD_EVENTS_MEASURE=1 (HERALD_EVENTS_MEASURE_TOKENS,
// _RATE and _REPS size it).
const EnvMeasureEvents = "HERALD_EVENTS_MEASURE"

// TestMeasureEvents measures SDK event reports beside a fan-out on the
// embedded store: pushes to every device of an app (100,000 tokens made
// in SQL) run one after another, every other one while the devices
// report received and opened (one request of two events each) for the
// pushes sent before, paced at 20,000 events a second by 64 reporters.
// Each push's deliveries a second and the accept latency of small pushes
// sent meanwhile are logged, with the events a second reached.
func TestMeasureEvents(t *testing.T) {
	if os.Getenv(EnvMeasureEvents) == "" {
		t.Skip("a measurement, not a test: set " + EnvMeasureEvents + "=1")
	}
	testenv.SQLiteOnly(t, "devices made in SQL")
	tokens := testenv.EnvInt(EnvMeasureEvents+"_TOKENS", 100_000)
	rate := testenv.EnvInt(EnvMeasureEvents+"_RATE", 20_000)
	reps := testenv.EnvInt(EnvMeasureEvents+"_REPS", 2)
	e := testenv.Start(t, testenv.Options{QuietLog: true})
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true})
	e.Register(a, "tok-", "u1")
	at := time.Now().Add(-time.Hour).UnixMilli()
	for _, q := range []string{
		`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < ? - 1)
			INSERT INTO users (app_id, user_id, state, created_at, updated_at) SELECT ?, printf('m%07d', i), 'registered', ?, ? FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < ? - 1)
			INSERT INTO devices (app_id, device_id, token, platform, app_source_version, user_id, marketing, marketing_night,
				created_at, token_updated_at)
			SELECT ?, printf('md%07d', i), printf('measure-%0150d', i), 'android', '1.6.0', printf('m%07d', i), 0, 0, ?, ? FROM n`,
	} {
		if _, err := e.DB.Writer.Exec(q, tokens, a.ID, at, at); err != nil {
			t.Fatalf("fill: %v", err)
		}
	}
	// The pushes the devices report: each measured push is reported by
	// the ones after it.
	first := sendAll(t, e, a, tokens+1, nil)
	sent := []string{first.pushID}
	t.Logf("first push (no reports): %s", first)
	var without, with []eventFigures
	for range reps {
		f := sendAll(t, e, a, tokens+1, nil)
		t.Logf("without reports: %s", f)
		without = append(without, f)
		sent = append(sent, f.pushID)
		r := &reporter{client: a.Client, devices: tokens, pushes: slices.Clone(sent), rate: rate}
		f = sendAll(t, e, a, tokens+1, r)
		t.Logf("with reports:    %s", f)
		with = append(with, f)
		sent = append(sent, f.pushID)
	}
	t.Logf("deliveries/s with ÷ without, rep by rep: %s", ratios(with, without))
}

// reporter reports received and opened of pushes for each device in
// turn, paced at rate events a second, until stopped.
type reporter struct {
	client  *client.Client
	devices int
	pushes  []string
	rate    int
	events  atomic.Int64
	errors  atomic.Int64
}

// run reports from 64 goroutines until stop is closed.
func (r *reporter) run(stop <-chan struct{}) {
	var next atomic.Int64
	start := time.Now()
	perRequest := time.Second * 2 / time.Duration(r.rate) // two events a request
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if d := time.Until(start.Add(time.Duration(i) * perRequest)); d > 0 {
					select {
					case <-stop:
						return
					case <-time.After(d):
					}
				}
				select {
				case <-stop:
					return
				default:
				}
				push := r.pushes[int(i)/r.devices%len(r.pushes)]
				device := fmt.Sprintf("md%07d", int(i)%r.devices)
				_, err := r.client.ReportEvents(context.Background(), device,
					[]client.Event{{PushID: push, Type: "received"}, {PushID: push, Type: "opened"}})
				if err != nil {
					r.errors.Add(1)
					continue
				}
				r.events.Add(2)
			}
		})
	}
	wg.Wait()
}

// eventFigures are what sendAll measured.
type eventFigures struct {
	pushID     string
	sent       int
	took       time.Duration
	perSecond  float64
	accepts    []time.Duration
	events     int64
	eventErrs  int64
	eventsRate float64
}

func (f eventFigures) String() string {
	slices.Sort(f.accepts)
	q := func(p float64) time.Duration {
		if len(f.accepts) == 0 {
			return 0
		}
		return f.accepts[min(len(f.accepts)-1, int(p*float64(len(f.accepts))))].Round(100 * time.Microsecond)
	}
	return fmt.Sprintf("%d sent in %v, %.0f deliveries/s; %d small accepts p50 %v p99 %v; %d events reported (%.0f/s, %d failed requests)",
		f.sent, f.took.Round(100*time.Millisecond), f.perSecond, len(f.accepts), q(0.5), q(0.99), f.events, f.eventsRate, f.eventErrs)
}

func ratios(with, without []eventFigures) string {
	var s string
	for i := range with {
		s += fmt.Sprintf("%.3f ", with[i].perSecond/without[i].perSecond)
	}
	return s
}

// sendAll sends a push to every device of a and, until it finished, a
// small push to u1 every 50 ms, with r reporting meanwhile when not nil.
func sendAll(t *testing.T, e *testenv.Harness, a testenv.App, want int, r *reporter) eventFigures {
	t.Helper()
	ctx := context.Background()
	var f eventFigures
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			began := time.Now()
			if _, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "small", Content: "meanwhile"}); err == nil {
				f.accepts = append(f.accepts, time.Since(began))
			}
		}
	})
	began := time.Now()
	if r != nil {
		wg.Go(func() { r.run(stop) })
	}
	res, err := a.Client.PushAll(ctx, client.PushAllRequest{Title: "to everyone", Content: "measure"})
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Status                string
		CreatedAt, FinishedAt *time.Time
		Counts                struct{ Sent int }
	}
	testenv.WaitFor(t, "the push to finish", 15*time.Minute, func() bool {
		time.Sleep(200 * time.Millisecond) // polling interval
		e.AdminJSON("GET", "/admin/v1/pushes/"+res.PushID, nil, &p)
		return p.FinishedAt != nil
	})
	close(stop)
	wg.Wait()
	if p.Status != "done" || p.Counts.Sent != want {
		t.Errorf("the push: got %s with %d sent, want done with %d", p.Status, p.Counts.Sent, want)
	}
	f.pushID, f.sent = res.PushID, p.Counts.Sent
	f.took = p.FinishedAt.Sub(*p.CreatedAt)
	f.perSecond = float64(f.sent) / f.took.Seconds()
	if r != nil {
		f.events, f.eventErrs = r.events.Load(), r.errors.Load()
		f.eventsRate = float64(f.events) / time.Since(began).Seconds()
	}
	return f
}
