package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/request"
)

// readEventsGeneral reads a report as reportEvents does without the fast
// path; ok is false when the body is refused.
func readEventsGeneral(body []byte, now time.Time) (string, []herald.Event, bool) {
	o, details := request.ParseLenient(body)
	deviceID, _ := o.Str("deviceId", true, 255)
	events := readEvents(o, "events", now)
	return deviceID, events, request.Invalid(details) == nil
}

// fastBodies are reports the fast path takes.
var fastBodies = []string{
	`{"deviceId":"d1","events":[{"pushId":"push_1","type":"received"},{"pushId":"push_1","type":"opened"}]}`,
	` { "events" : [ { "type" : "opened" , "pushId" : "p" , "at" : "2026-11-26T10:00:00Z" } ] , "deviceId" : "d 1" } `,
	`{"deviceId":"d1","events":[{"pushId":"p","type":"received","at":null}]}`,
	"{\"deviceId\":\"d1\",\r\n\t\"events\":[{\"pushId\":\"p\",\"type\":\"received\",\"at\":\"2026-11-26T10:00:00.123+09:00\"}]}",
	`{"deviceId":"` + strings.Repeat("d", 255) + `","events":[{"pushId":"` + strings.Repeat("p", 255) + `","type":"opened"}]}`,
	`{"deviceId":"d1","events":[` + strings.TrimSuffix(strings.Repeat(`{"pushId":"p","type":"opened"},`, herald.MaxEvents), ",") + `]}`,
}

// slowBodies are reports the fast path leaves to the general parser:
// refused ones, and ones it does not read itself.
var slowBodies = []string{
	``, `null`, `[]`, `{}`, `{"deviceId":"d1"}`, `{"events":[{"pushId":"p","type":"opened"}]}`,
	`{"deviceId":"d1","events":[]}`,
	`{"deviceId":"d1","events":[{"pushId":"p","type":"opened"}],"extra":1}`,
	`{"deviceId":"d1","deviceId":"d2","events":[{"pushId":"p","type":"opened"}]}`,
	`{"deviceId":"d1","events":[{"pushId":"p","type":"opened","type":"received"}]}`,
	`{"deviceId":"d\u0031","events":[{"pushId":"p","type":"opened"}]}`,
	`{"deviceId":"dé","events":[{"pushId":"p","type":"opened"}]}`,
	`{"deviceId":" ","events":[{"pushId":"p","type":"opened"}]}`,
	`{"deviceId":"` + strings.Repeat("d", 256) + `","events":[{"pushId":"p","type":"opened"}]}`,
	`{"deviceId":"d1","events":[{"pushId":"","type":"opened"}]}`,
	`{"deviceId":"d1","events":[{"pushId":"p","type":"clicked"}]}`,
	`{"deviceId":"d1","events":[{"pushId":"p"}]}`,
	`{"deviceId":"d1","events":[{"pushId":"p","type":"opened","at":"yesterday"}]}`,
	`{"deviceId":"d1","events":[{"pushId":"p","type":"opened","at":12}]}`,
	`{"deviceId":"d1","events":[{"pushId":"p","type":"opened","at":nul}]}`,
	`{"deviceId":"d1","events":[{"pushId":"p","type":"opened"}]} x`,
	`{"deviceId":"d1","events":[{"pushId":"p","type":"opened"},]}`,
	`{"deviceId":1,"events":[{"pushId":"p","type":"opened"}]}`,
	`{"deviceId":"d1","events":{"pushId":"p","type":"opened"}}`,
	`{"deviceId":"d1","events":[` + strings.TrimSuffix(strings.Repeat(`{"pushId":"p","type":"opened"},`, herald.MaxEvents+1), ",") + `]}`,
}

// TestReadEventsFast: the fast path takes the common shapes and leaves the
// others, and what it reads is what the general parser reads.
func TestReadEventsFast(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	for _, body := range fastBodies {
		if _, _, ok := readEventsFast([]byte(body), now); !ok {
			t.Errorf("%.80s: not taken by the fast path, want taken", body)
		}
		sameAsGeneral(t, []byte(body), now)
	}
	for _, body := range slowBodies {
		if _, _, ok := readEventsFast([]byte(body), now); ok {
			t.Errorf("%.80s: taken by the fast path, want left to the parser", body)
		}
	}
}

// FuzzReadEventsFast: whatever the fast path takes, the general parser
// takes too, and reads the same.
func FuzzReadEventsFast(f *testing.F) {
	for _, b := range append(fastBodies, slowBodies...) {
		f.Add([]byte(b))
	}
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) { sameAsGeneral(t, body, now) })
}

// FuzzReadEventsFastJSON holds the fast path to encoding/json: whatever
// it takes, encoding/json decodes to the same device and events (strings
// byte for byte, "at" as RFC 3339 or, null or absent, now).
func FuzzReadEventsFastJSON(f *testing.F) {
	for _, b := range append(fastBodies, slowBodies...) {
		f.Add([]byte(b))
	}
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		device, events, ok := readEventsFast(body, now)
		if !ok {
			return
		}
		var v struct {
			DeviceID string `json:"deviceId"`
			Events   []struct {
				PushID string  `json:"pushId"`
				Type   string  `json:"type"`
				At     *string `json:"at"`
			} `json:"events"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("%.80s: the fast path took it, encoding/json refused it: %v", body, err)
		}
		if v.DeviceID != device || len(v.Events) != len(events) {
			t.Fatalf("%.80s: fast path (%q, %d events), encoding/json (%q, %d)", body, device, len(events), v.DeviceID, len(v.Events))
		}
		for i, e := range v.Events {
			at := now
			if e.At != nil {
				var err error
				if at, err = time.Parse(time.RFC3339, *e.At); err != nil {
					t.Fatalf("%.80s: event %d's at %q: %v", body, i, *e.At, err)
				}
			}
			if got := events[i]; got.PushID != e.PushID || string(got.Type) != e.Type || !got.At.Equal(at) {
				t.Fatalf("%.80s: event %d: fast path %+v, encoding/json %+v", body, i, got, e)
			}
		}
	})
}

// sameAsGeneral fails when the fast path takes body and reads other than
// the general parser.
func sameAsGeneral(t *testing.T, body []byte, now time.Time) {
	t.Helper()
	device, events, ok := readEventsFast(body, now)
	if !ok {
		return
	}
	wantDevice, wantEvents, wantOK := readEventsGeneral(body, now)
	if !wantOK || device != wantDevice || !reflect.DeepEqual(events, wantEvents) {
		t.Errorf("%.80s: fast path read (%q, %v), the parser (%q, %v, taken %v)", body, device, events, wantDevice, wantEvents, wantOK)
	}
}
