package sendstore

import (
	"fmt"
	"testing"

	"github.com/heraldpush/herald"
)

// TestApplyEvents: a step with a stream makes one event per sent or
// failed device (a resent send is sent, an undeliverable one failed with
// its reason, a failure with its error when it has no reason), none for a
// suppression, none of the types the app does not take; a retry chunk of
// a push that failed meanwhile fails its slots, with their events.
func TestApplyEvents(t *testing.T) {
	sent, resent, dead, failed, quiet := slot(0), slot(1), slot(2), slot(3), slot(4)
	resent.State, resent.Resent = herald.DeliverySent, true
	dead.State, dead.Reason = herald.DeliveryUndeliverable, herald.ReasonAppDeleted
	failed.State, failed.Error = herald.DeliveryFailed, "INTERNAL"
	quiet.State = herald.DeliverySuppressedConsent
	st := ChunkStep{Old: rng(0, 6), New: rng(6, 6), Sent: []herald.Delivery{sent}, Rows: []herald.Delivery{resent, dead, failed, quiet},
		Retry: &RetryChunk{Slots: []herald.Delivery{slot(5)}, Job: retryJob("p")}}
	for _, tc := range []struct {
		name    string
		stream  *Stream
		stopped bool
		want    string
	}{
		{"Off", nil, false, "[]"},
		{"Both", &Stream{Sent: true, Failed: true, RequestGroupID: "g"}, false,
			"[push.sent d0 t0 g  push.sent d1 t1 g  push.failed d2 t2 g APP_DELETED push.failed d3 t3 g INTERNAL]"},
		{"SentOnly", &Stream{Sent: true}, false, "[push.sent d0 t0   push.sent d1 t1  ]"},
		{"FailedOnly", &Stream{Failed: true}, false, "[push.failed d2 t2  APP_DELETED push.failed d3 t3  INTERNAL]"},
		{"Stopped", &Stream{Failed: true}, true, "[push.failed d2 t2  APP_DELETED push.failed d3 t3  INTERNAL push.failed d5 t5  ]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := st
			s.Stream = tc.stream
			_, e, err := Chunk{Range: rng(0, 6), Stopped: tc.stopped}.Apply(s, Facts{RetryChunk: -1})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ev := range e.Events {
				got = append(got, fmt.Sprintf("%s %s %s %s %s", ev.Type, ev.DeviceID, ev.TokenSuffix, ev.RequestGroupID, ev.Reason))
			}
			if fmt.Sprint(got) != tc.want && !(len(got) == 0 && tc.want == "[]") {
				t.Errorf("events: got %v, want %s", got, tc.want)
			}
		})
	}
}
