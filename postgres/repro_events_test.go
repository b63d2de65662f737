package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// TestReproEventsIgnoreDeadline: a device's report on a database that
// does not answer (here: tables locked by another session) returns at the
// store's own 10 s bounds, not at the request's deadline.
func TestReproEventsIgnoreDeadline(t *testing.T) {
	ctx := context.Background()
	db, app := reproSchema(t)
	now := time.Now()
	u := "u0"
	d, err := db.RegisterDevice(ctx, app.ID, herald.DeviceRegistration{DeviceID: "d0", Token: "t0", Platform: herald.PlatformAndroid, AppSourceVersion: "1.6.0", UserID: &u})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 2 {
		p := herald.Push{ID: herald.NewID("push_", time.Now()), AppID: app.ID, Kind: herald.KindUsers, Status: herald.StatusSending,
			Content: herald.Content{Title: "t", Content: "c"}, RequestedUsers: 1, ServerActionsHalf: 1, CreatedAt: now}
		if _, _, err := db.AcceptPush(ctx, p, []herald.Recipient{{UserID: u}}, nil, reproJob{"bh.fanout"}); err != nil {
			t.Fatal(err)
		}
		f := sendstore.Fanout{To: sendstore.FanoutCursor{Seq: 1, Chunk: 1}, Deliveries: []herald.Delivery{{UserID: u, DeviceID: d.ID, Token: d.Token,
			Platform: d.Platform, TokenUpdatedAt: d.TokenUpdatedAt, State: herald.DeliveryPending}}}
		if ok, err := db.StartSending(ctx, p.ID, f); err != nil || !ok {
			t.Fatal(ok, err)
		}
		// Events count only for a device sent the push: its send is
		// recorded (marked in flight, then settled sent).
		for _, st := range []sendstore.ChunkStep{
			{New: sendstore.Range{Marked: 1}, Targets: []sendstore.SlotTarget{{DeviceID: d.ID, Token: d.Token, Owner: &u}}},
			{Old: sendstore.Range{Marked: 1}, New: sendstore.Range{Settled: 1, Marked: 1}},
		} {
			if _, _, err := db.AdvanceChunk(ctx, app.ID, p.ID, st); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, p.ID)
	}
	// Push 1's targets are read (cached) before the lock.
	if got, err := db.RecordEvents(ctx, app.ID, d.ID, []herald.EventMark{{PushID: ids[1], Type: herald.EventReceived, At: now}}); err != nil || !got[0] {
		t.Fatal(got, err)
	}
	for i, table := range []string{"pushes", "push_events"} {
		t0, err := db.Pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := t0.Exec(ctx, `LOCK TABLE `+table+` IN ACCESS EXCLUSIVE MODE`); err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithTimeout(ctx, time.Second) // the request's deadline
		start := time.Now()
		_, err = db.RecordEvents(rctx, app.ID, d.ID, []herald.EventMark{{PushID: ids[i], Type: herald.EventOpened, At: now}})
		took := time.Since(start)
		cancel()
		t0.Rollback(ctx)
		msg := fmt.Sprintf("%s locked: RecordEvents with a 1 s deadline returned after %v: %v", table, took.Round(100*time.Millisecond), err)
		t.Log(msg)
		if took > 3*time.Second {
			t.Errorf("context ignored: %s", msg)
		}
	}
}
