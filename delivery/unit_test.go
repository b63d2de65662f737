package delivery

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/heraldpush/herald"
)

// TestUnitEveryKind: Unit gives a runnable job for every kind Workers
// registers, with the worker's timeout, and refuses a kind it does not
// know.
func TestUnitEveryKind(t *testing.T) {
	t.Parallel()
	s := New(Config{})
	for _, args := range []river.JobArgs{FanoutArgs{PushID: "p"}, SendArgs{PushID: "p", Chunk: 1}, FinishArgs{PushID: "p"},
		WebhookArgs{}, herald.ConsentEventJob{}, herald.ConsentNoticeJob{}, DailyArgs{}, ReconfirmedArgs{PushID: "p"}} {
		raw, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		u, err := s.Unit(&rivertype.JobRow{ID: 1, Kind: args.Kind(), EncodedArgs: raw, Attempt: 1})
		if err != nil || u.Work == nil || u.NextRetry == nil {
			t.Fatalf("Unit(%s) = %+v, %v; want a runnable job", args.Kind(), u, err)
		}
		want := time.Duration(0)
		if args.Kind() == (WebhookArgs{}).Kind() || args.Kind() == (herald.ConsentEventJob{}).Kind() {
			want = 30 * time.Second
		}
		if u.Timeout != want {
			t.Errorf("Unit(%s).Timeout = %s, want %s", args.Kind(), u.Timeout, want)
		}
	}
	if _, err := s.Unit(&rivertype.JobRow{Kind: "herald.nothing", EncodedArgs: []byte(`{}`)}); err == nil {
		t.Error("Unit of an unknown kind: got no error")
	}
}
