package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
	"github.com/heraldpush/herald/sqlstore"
)

// TestReproCompleteChunkFailPushDeadlock: CompleteChunk locks its chunk,
// then the push; FailPush locks the push, then every chunk.
func TestReproCompleteChunkFailPushDeadlock(t *testing.T) {
	ctx := context.Background()
	db, app := reproSchema(t)
	now := time.Now()
	var devs []herald.Device
	for i := range 2 {
		u := fmt.Sprintf("u%d", i)
		d, err := db.RegisterDevice(ctx, app.ID, herald.DeviceRegistration{DeviceID: fmt.Sprintf("d%d", i), Token: fmt.Sprintf("t%d", i),
			Platform: herald.PlatformAndroid, AppSourceVersion: "1.6.0", UserID: &u})
		if err != nil {
			t.Fatal(err)
		}
		devs = append(devs, d)
	}
	for trial, held := range []int{0, 1} {
		completed := 1 - held
		p := herald.Push{ID: herald.NewID("push_", time.Now()), AppID: app.ID, Kind: herald.KindUsers, Status: herald.StatusSending,
			Content: herald.Content{Title: "t", Content: "c"}, RequestedUsers: 2, ServerActionsHalf: 2, CreatedAt: now}
		rs := []herald.Recipient{{UserID: "u0"}, {UserID: "u1"}}
		if _, _, err := db.AcceptPush(ctx, p, rs, nil, reproJob{"bh.fanout"}); err != nil {
			t.Fatal(err)
		}
		f := sendstore.Fanout{}
		for i, d := range devs {
			f.Deliveries = append(f.Deliveries, herald.Delivery{Seq: i, RecipientIdx: i, UserID: *d.UserID, DeviceID: d.ID, Token: d.Token,
				Platform: d.Platform, TokenUpdatedAt: d.TokenUpdatedAt, Chunk: i, State: herald.DeliveryPending})
		}
		f.To = sendstore.FanoutCursor{Seq: 2, Chunk: 2}
		if ok, err := db.StartSending(ctx, p.ID, f); err != nil || !ok {
			t.Fatal(ok, err)
		}
		// Another session holds one chunk's row a moment (a send step, say).
		t0, err := db.Pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := t0.Exec(ctx, `SELECT 1 FROM push_chunks WHERE push_id = $1 AND chunk = $2 FOR UPDATE`, p.ID, held); err != nil {
			t.Fatal(err)
		}
		failErr, completeErr := make(chan error, 1), make(chan error, 1)
		go func() { failErr <- db.FailPush(ctx, p.ID, "credentials refused", reproJob{"bh.finish"}) }()
		time.Sleep(300 * time.Millisecond)
		go func() { _, err := db.CompleteChunk(ctx, p.ID, completed); completeErr <- err }()
		time.Sleep(300 * time.Millisecond)
		if err := t0.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		e1, e2 := <-failErr, <-completeErr
		t.Logf("trial %d: FailPush: %v; CompleteChunk: %v", trial, e1, e2)
		if errors.Is(e1, sqlstore.ErrDeadlock) || errors.Is(e2, sqlstore.ErrDeadlock) {
			t.Errorf("trial %d: deadlock between FailPush and CompleteChunk (lock order push->chunks vs chunk->push)", trial)
		}
	}
}
