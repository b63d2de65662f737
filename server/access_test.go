package server

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/identity"
	"github.com/heraldpush/herald/sqlite/sqlitetest"
)

// TestAccessRecordsStepLogsHead: the daily run's access-records step
// appends the records of ended attempt windows, and once its pruning is
// done logs the chain's signed head, for an operator to keep outside the
// database (DESIGN 11).
func TestAccessRecordsStepLogsHead(t *testing.T) {
	db := sqlitetest.Open(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	db.Now = func() time.Time { return now }
	key := access.Key("k")
	ctx := context.Background()
	for range identity.AttemptLimit + 3 {
		if _, err := db.CountAttempt(ctx, []string{identity.AddressKey("192.0.2.1")}, identity.AttemptLimit, now.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	var logs bytes.Buffer
	step := accessRecordsStep(db, key, db.Now, slog.New(slog.NewTextHandler(&logs, nil)))
	if _, err := step(ctx, now.Add(-herald.Days(herald.AccessRecordDays)), 100); err != nil {
		t.Fatal(err)
	}
	head, err := db.AccessHead(ctx)
	if err != nil || head.Seq != 1 || !key.Signs(head.Hash, head.HMAC) {
		t.Fatalf("head after the step: %+v, %v; want the window's aggregated record, signed", head, err)
	}
	if line := logs.String(); !strings.Contains(line, `msg="access records head" seq=1 hash=`+head.Hash+` hmac=`+head.HMAC) {
		t.Errorf("the step's log: got %q, want the head %+v", line, head)
	}
}
