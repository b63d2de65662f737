package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/delivery"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/sendstore"
)

// blipStore fails the first read of a page after the first on its node,
// as a database blip would.
type blipStore struct {
	delivery.Store
	blips *atomic.Int32
	done  atomic.Bool
}

func (b *blipStore) DevicePage(ctx context.Context, appID string, sel sendstore.Selection, after sendstore.DeviceCursor, limit int) ([]herald.Device, sendstore.DeviceCursor, error) {
	if after != (sendstore.DeviceCursor{}) && b.done.CompareAndSwap(false, true) {
		b.blips.Add(1)
		return nil, after, errors.New("injected: the connection was reset")
	}
	return b.Store.DevicePage(ctx, appID, sel, after, limit)
}

// TestScheduledFanoutNodes (PostgreSQL): a scheduled all-users push on two
// nodes, read three devices a page, whose fan-out outlives the send slice
// (here it yields after every page), and one whose runs each meet a store
// error on a page: each finishes with every device sent once. A run that
// yielded or failed part-way used to be dropped with the push's start
// recorded, leaving it sending forever.
func TestScheduledFanoutNodes(t *testing.T) {
	if testEngine() != "postgres" {
		t.Skip("several nodes need PostgreSQL: set HERALD_TEST_DATABASE_URL")
	}
	for i, name := range []string{"OutlivesSlice", "StoreError"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var blips atomic.Int32
			clk := &testClock{}
			at := time.Date(2026, 12, 7, 12, i, 0, 0, testenv.Seoul)
			clk.Run(at.Add(-10 * time.Minute))
			tweak := func(c *config) {
				c.overrides.Clock, c.overrides.FanoutPage, c.overrides.SendSlice = clk.Now, 3, time.Nanosecond
				if name == "StoreError" {
					c.overrides.DeliveryStore = func(s delivery.Store) delivery.Store { return &blipStore{Store: s, blips: &blips} }
				}
			}
			e := start(t, tweak)
			other, err := startService(context.Background(), e.config(tweak), io.Discard, e.logs)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { other.shutdown() })
			a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true, "timeZone": "Asia/Seoul"})
			registerAll(t, a.Client, 20, 4)

			res := e.ServerDo("POST", "/api/push/v2/all", a.Keys(),
				map[string]any{"title": "All", "content": "c", "options": map[string]any{"scheduleTime": at.Format("2006-01-02T15:04")}})
			if res.Status != http.StatusOK {
				t.Fatalf("scheduled all-users push: got %d %s", res.Status, res.Body)
			}
			id := res.Header.Get("X-Push-Id")
			clk.Run(at.Add(-3 * time.Second)) // its River job keeps the real clock: the nodes' watches fire it
			p := e.WaitFinal(id, 60*time.Second)
			got := e.SentTo(id)
			for i := range 20 {
				if tok := fmt.Sprintf("crash-%d", i); got[tok] != 1 {
					t.Errorf("%s: %d messages, want 1", tok, got[tok])
				}
			}
			if p.Status != "done" || p.Counts.Sent != 20 || p.Counts.RequestedUsers != 20 {
				t.Errorf("got %s %+v, want done with 20 users sent", p.Status, p.Counts)
			}
			if name == "StoreError" && blips.Load() == 0 {
				t.Errorf("no run met the injected error")
			}
		})
	}
}

// TestNightDeferralHolderDies (PostgreSQL): the deferred part's job is
// held by a node that dies (it stays running, as a killed node leaves it,
// until River's rescue, about 90 s on), and the node that accepted the
// push stops 2 s before 08:00; the one node left sends the part within
// 1 s of 08:00, each device once.
func TestNightDeferralHolderDies(t *testing.T) {
	if testEngine() != "postgres" {
		t.Skip("several nodes need PostgreSQL: set HERALD_TEST_DATABASE_URL")
	}
	t.Parallel()
	clk := &testClock{}
	morning := time.Date(2026, 12, 8, 8, 0, 0, 0, testenv.Seoul)
	e, a := startNightNodes(t, clk, morning)
	clk.Run(morning.Add(-15 * time.Second))
	id := testenv.PushDefer(t, a, "none", "day", "all", "late", "quit")
	testenv.WantDeferredPush(t, e.Harness, a, id, morning, 3)
	// The deferred chunk's job is due 6 s before its morning: a node that
	// then dies has fetched it.
	n, err := e.svc.DB.JobsDB().Exec(`UPDATE river_job SET state = 'running', attempt = attempt + 1, attempted_at = now(),
		attempted_by = ARRAY['node_killed'] WHERE kind = 'herald.send' AND args->>'pushId' = $1 AND args->>'morning' IS NOT NULL
		AND state IN ('scheduled', 'available')`, id)
	if err != nil {
		t.Fatal(err)
	}
	if rows, _ := n.RowsAffected(); rows != 1 {
		t.Fatalf("deferred send jobs taken by the dead node: %d, want 1", rows)
	}
	testenv.MorningChanges(t, clk, a, morning)
	waitFor(t, "2 s before the morning", 20*time.Second, func() bool { return !clk.Now().Before(morning.Add(-2 * time.Second)) })
	if err := e.svc.shutdown(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the morning's sends", 20*time.Second, func() bool { return len(e.SentTo(id)) == 3 })
	e.startService(func(c *config) { c.overrides.Clock = clk.Now })
	testenv.WantMorning(t, e.Harness, clk, a, id, morning)
	for _, u := range []string{"day", "late"} {
		msgs := e.Received("cons-" + a.ID[len(a.ID)-6:] + "-" + u)
		if late := clk.Fake(msgs[0].ReceivedAt).Sub(morning); late > time.Second {
			t.Errorf("%s: sent %v after 08:00, want within 1 s", u, late)
		}
	}
}
