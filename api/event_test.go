package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/api"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/server"
)

const eventsPath = "/api/sdk/v2/events"

func TestReportEventsInvalid(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.CreateApp(t, nil)
	ev := `{"pushId":"push_0000000000000000000000","type":"received"}`
	many := strings.Repeat(ev+",", herald.MaxEvents) + ev
	for _, c := range []struct {
		name, body, field string
	}{
		{"NotJSON", `{"deviceId":`, "body"},
		{"NotObject", `[]`, "body"},
		{"NoDeviceID", `{"events":[` + ev + `]}`, "deviceId"},
		{"DeviceIDNotString", `{"deviceId":7,"events":[` + ev + `]}`, "deviceId"},
		{"NoEvents", `{"deviceId":"d1"}`, "events"},
		{"EventsNotArray", `{"deviceId":"d1","events":{}}`, "events"},
		{"NoEvent", `{"deviceId":"d1","events":[]}`, "events"},
		{"OverHundred", `{"deviceId":"d1","events":[` + many + `]}`, "events"},
		{"EventNotObject", `{"deviceId":"d1","events":["received"]}`, "events[0]"},
		{"NoPushID", `{"deviceId":"d1","events":[` + ev + `,{"type":"opened"}]}`, "events[1].pushId"},
		{"PushIDNotString", `{"deviceId":"d1","events":[{"pushId":1,"type":"opened"}]}`, "events[0].pushId"},
		{"NoType", `{"deviceId":"d1","events":[{"pushId":"p"}]}`, "events[0].type"},
		{"UnknownType", `{"deviceId":"d1","events":[{"pushId":"p","type":"clicked"}]}`, "events[0].type"},
		{"AtNotRFC3339", `{"deviceId":"d1","events":[{"pushId":"p","type":"opened","at":"2025-06-11 13:04:30"}]}`, "events[0].at"},
		{"AtNoZone", `{"deviceId":"d1","events":[{"pushId":"p","type":"opened","at":"2025-06-11T13:04:30"}]}`, "events[0].at"},
		{"AtNotADate", `{"deviceId":"d1","events":[{"pushId":"p","type":"opened","at":"2025-02-30T13:04:30Z"}]}`, "events[0].at"},
		{"AtNumber", `{"deviceId":"d1","events":[{"pushId":"p","type":"opened","at":1749647070}]}`, "events[0].at"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := env.SDK(t, app, http.MethodPost, eventsPath, c.body)
			got := testenv.WantError(t, res, eventsPath, herald.ErrInvalidRequest)
			if !slices.ContainsFunc(got.Details, func(d herald.Detail) bool { return d.Field == c.field }) {
				t.Errorf("details: got %+v, want one naming %s", got.Details, c.field)
			}
		})
	}
	t.Run("NoAPIKey", func(t *testing.T) {
		res := env.Do(t, testenv.Request{Method: http.MethodPost, URL: eventsPath, Body: `{"deviceId":"d1","events":[` + ev + `]}`})
		testenv.WantError(t, res, eventsPath, herald.ErrNoKeys.With(herald.MissingHeader("x-api-key"))) // the SDK sends no secret
	})
}

// TestReportEventsIgnoredOnRealStore: whatever cannot count is answered
// 200 and ignored, on the real store: no push, an unknown device.
func TestReportEventsIgnoredOnRealStore(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.CreateApp(t, nil)
	res := env.SDK(t, app, http.MethodPost, eventsPath, map[string]any{"deviceId": "nobody", "events": []map[string]any{
		{"pushId": "push_0000000000000000000000", "type": "received"}, {"pushId": "not-a-push", "type": "opened", "at": nil},
	}})
	if res.Status != http.StatusOK || strings.TrimSpace(string(res.Body)) != `{"accepted":0,"ignored":2}` {
		t.Errorf("got %d %s, want 200 {\"accepted\":0,\"ignored\":2}", res.Status, res.Body)
	}
}

// eventFake is an EventStore that records what it is asked and answers
// recorded for every mark of the pushes listed in sent, once each.
type eventFake struct {
	mu    sync.Mutex
	sent  map[string]bool
	seen  map[herald.EventMark]bool
	asked [][]herald.EventMark
	fail  error
}

func (f *eventFake) RecordEvents(_ context.Context, _, _ string, marks []herald.EventMark) ([]bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, marks)
	if f.fail != nil {
		return nil, f.fail
	}
	out := make([]bool, len(marks))
	for i, m := range marks {
		key := herald.EventMark{PushID: m.PushID, Type: m.Type}
		out[i] = f.sent[m.PushID] && !f.seen[key]
		f.seen[key] = true
	}
	return out, nil
}

// eventsAPI is the public handler over fakes, with the events it counted.
type eventsAPI struct {
	fakeAPI
	events  *eventFake
	mu      sync.Mutex
	counted map[string]int
}

func newEventsAPI() *eventsAPI {
	f := newFake()
	a := &eventsAPI{events: &eventFake{sent: map[string]bool{"p1": true, "p2": true}, seen: map[herald.EventMark]bool{}},
		counted: map[string]int{}}
	a.fakeAPI = fakeAPI{fake: f, h: api.NewHandler(api.Config{Store: f, Pushes: f, Events: a.events,
		Now: func() time.Time { return fakeNow }, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		CountEvent: func(typ herald.EventType, ok bool) {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.counted[fmt.Sprintf("%s/%v", typ, ok)]++
		}})}
	return a
}

func TestReportEventsAnswer(t *testing.T) {
	t.Parallel()
	a := newEventsAPI()
	body := `{"deviceId":"d1","appVersion":"ignored","events":[
		{"pushId":"p1","type":"opened"},
		{"pushId":"p1","type":"received"},
		{"pushId":"p2","type":"received","at":"2025-06-11T22:00:00+09:00"},
		{"pushId":"p3","type":"received"},
		{"pushId":"p2","type":"opened","at":"2025-06-11T13:09:31Z"},
		{"pushId":"p2","type":"opened","at":"2025-05-01T00:00:00Z"}]}`
	res := a.do(http.MethodPost, eventsPath, body)
	var got struct{ Accepted, Ignored int }
	if err := json.Unmarshal([]byte(res.Body), &got); res.Status != http.StatusOK || err != nil {
		t.Fatalf("got %d %s, want 200", res.Status, res.Body)
	}
	// p1 opened (its received with it), so p1's received is a repeat; p2
	// received; p3 is not the device's; p2 opened 5 minutes and a second
	// ahead, and 41 days old, are out of range.
	if got.Accepted != 2 || got.Ignored != 4 {
		t.Errorf("answer: got %+v, want 2 accepted, 4 ignored", got)
	}
	at := time.Date(2025, 6, 11, 13, 0, 0, 0, time.UTC)
	want := []herald.EventMark{
		{PushID: "p1", Type: herald.EventReceived, At: fakeNow}, {PushID: "p1", Type: herald.EventOpened, At: fakeNow},
		{PushID: "p1", Type: herald.EventReceived, At: fakeNow}, {PushID: "p2", Type: herald.EventReceived, At: at},
		{PushID: "p3", Type: herald.EventReceived, At: fakeNow},
	}
	if len(a.events.asked) != 1 || !slices.EqualFunc(a.events.asked[0], want, func(x, y herald.EventMark) bool {
		return x.PushID == y.PushID && x.Type == y.Type && x.At.Equal(y.At)
	}) {
		t.Errorf("marks: got %+v, want %+v", a.events.asked, want)
	}
	wantCounted := map[string]int{"opened/true": 1, "received/false": 2, "received/true": 1, "opened/false": 2}
	if fmt.Sprint(a.counted) != fmt.Sprint(wantCounted) {
		t.Errorf("counted: got %v, want %v", a.counted, wantCounted)
	}
}

func TestReportEventsStoreError(t *testing.T) {
	t.Parallel()
	a := newEventsAPI()
	a.events.fail = errors.New("disk on fire")
	res := a.do(http.MethodPost, eventsPath, `{"deviceId":"d1","events":[{"pushId":"p1","type":"opened"}]}`)
	if res.Status != http.StatusInternalServerError || res.Err.Code != herald.ErrInternal.Code || strings.Contains(res.Body, "fire") {
		t.Errorf("got %d %s, want 500 %s without the cause", res.Status, res.Body, herald.ErrInternal.Code)
	}
}

func TestReportEventsRefusedAsksNothing(t *testing.T) {
	t.Parallel()
	a := newEventsAPI()
	res := a.do(http.MethodPost, eventsPath, `{"deviceId":"d1","events":[{"pushId":"p1","type":"opened"},{"pushId":"p1","type":"x"}]}`)
	if res.Status != http.StatusBadRequest || len(a.events.asked) != 0 {
		t.Errorf("got %d %s and %d store calls, want 400 and none", res.Status, res.Body, len(a.events.asked))
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodOptions, eventsPath, nil)
	a.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusNoContent || rec.Header().Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("preflight: got %d %v, want 204 with CORS", rec.Code, rec.Header())
	}
}

// TestReportEventsRateLimited: event reports share the SDK API's limit
// per app with its other calls.
func TestReportEventsRateLimited(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Config: server.Config{API: api.Limits{SDK: 0.01}}})
	app := env.CreateApp(t, nil)
	env.RegisterToken(t, app, "d1", "token-0001", nil)
	res := env.SDK(t, app, http.MethodPost, eventsPath, `{"deviceId":"d1","events":[{"pushId":"p","type":"received"}]}`)
	wantTooMany(t, res, eventsPath)
}
