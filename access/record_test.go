package access_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/sqlite/sqlitetest"
	"github.com/heraldpush/herald/web"
)

// failingAppends is a store whose appends fail while fail is set.
type failingAppends struct {
	access.Store
	fail bool
}

func (s *failingAppends) AppendAccessRecords(ctx context.Context, key access.Key, recs []access.Record) ([]access.Record, error) {
	if s.fail {
		return nil, herald.Unavailable(errors.New("appends refused"))
	}
	return s.Store.AppendAccessRecords(ctx, key, recs)
}

// TestWrap: an authenticated request's answer waits for its record; a
// change's intent is durable before the handler acts; when the record
// cannot be written the answer is 503 and the intent becomes, a minute
// later, a record of unknown outcome; an unauthenticated request is not
// recorded.
func TestWrap(t *testing.T) {
	db := sqlitetest.Open(t)
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	db.Now = clock
	store := &failingAppends{Store: db}
	rc := &access.Recorder{Store: store, Key: access.Key("k"), Now: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	owner := herald.Owner()
	var intended bool
	h := rc.Wrap(func(w http.ResponseWriter, r *http.Request) {
		n := access.NoteOf(r.Context())
		if r.URL.Path == "/anonymous" {
			w.WriteHeader(http.StatusTeapot)
			return
		}
		n.Authenticated(owner)
		if r.Method == http.MethodPost {
			if err := n.Intend(); err != nil {
				web.Error(w, r, herald.Unavailable(err))
				return
			}
			intended = true
			n.ShowedUsers("alice")
		}
		w.WriteHeader(http.StatusCreated)
	}, web.Error)
	do := func(method, path string) int {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(method, path, nil)
		r.Pattern = method + " " + path
		h(w, r)
		return w.Code
	}
	records := func() []access.Record {
		t.Helper()
		if err := rc.RecordPending(context.Background()); err != nil {
			t.Fatal(err)
		}
		recs, _, err := db.AccessRecords(context.Background(), access.Filter{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}

	if code := do(http.MethodPost, "/things"); code != http.StatusCreated || !intended {
		t.Fatalf("a change: got %d (intended %t), want 201 after its intent", code, intended)
	}
	if code := do(http.MethodGet, "/anonymous"); code != http.StatusTeapot {
		t.Fatalf("an unauthenticated request: got %d, want its own answer", code)
	}
	recs := records()
	if len(recs) != 1 || recs[0].Route != "POST /things" || recs[0].Status != http.StatusCreated || recs[0].UserCount != 1 {
		t.Fatalf("records: %+v, want the change's alone, 201, with its user", recs)
	}

	store.fail = true
	if code := do(http.MethodPost, "/things"); code != http.StatusServiceUnavailable {
		t.Fatalf("a change whose record cannot be written: got %d, want 503", code)
	}
	store.fail = false
	if n := len(records()); n != 1 {
		t.Fatalf("records before the intent is abandoned: %d, want 1", n)
	}
	now = now.Add(access.IntentAbandoned)
	recs = records()
	if len(recs) != 2 || recs[1].Route != "POST /things" || recs[1].Status != access.StatusUnknown || recs[1].UserCount != 0 {
		t.Fatalf("records after: %+v, want the intent as a record of unknown outcome", recs)
	}
	if v, err := db.VerifyAccessRecords(context.Background(), access.Key("k"), nil); err != nil || !v.OK {
		t.Errorf("verify: %+v, %v", v, err)
	}
}
