package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/postgres"
	"github.com/heraldpush/herald/postgres/pgtest"
)

// TestOutagePostgresPushesLocked locks the pushes table (LOCK TABLE …
// ACCESS EXCLUSIVE, as a migration or a careless operator would) while a
// push of a few thousand tokens is being sent: delivery's jobs wait on the
// lock, but what never touches pushes (an SDK registration, /readyz, an
// admin read of an app) still answers 200 well within the readiness
// budget of 2 s, and the push finishes once the lock is released.
func TestOutagePostgresPushesLocked(t *testing.T) {
	base := pgtest.BaseURL(t)
	url := pgtest.NewSchema(t, base, map[string]string{"pool_max_conns": "8"})
	e := start(t, testenv.Options{DatabaseURL: url, QuietLog: true, Emulator: emulator.Options{Latency: 50 * time.Millisecond}})
	db := e.Node.DB.(*postgres.DB)
	a := e.NewApp(nil)
	const tokens = 4000
	registerMany(t, a, tokens, 4)

	res, err := a.Client.PushAll(context.Background(), client.PushAllRequest{Title: "big", Content: "in flight"})
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "sends under way", 30*time.Second, func() bool { return e.Emulator.Stats().Accepted >= 200 })

	ctx := context.Background()
	locker, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { locker.Close(ctx) })
	tx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE `+pgx.Identifier{db.Schema(), "pushes"}.Sanitize()+` IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	locked := time.Now()
	unlock := sync.OnceFunc(func() {
		if err := tx.Rollback(ctx); err != nil {
			t.Errorf("release the lock: %v", err)
		}
	})
	t.Cleanup(unlock)
	watcher, err := pgx.Connect(ctx, base) // outside the locker's transaction, whose view of pg_stat_activity stays as it first read it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { watcher.Close(ctx) })

	// Delivery's jobs run into the lock one by one: ask every 1.5 s for
	// 12 s, three requests that never touch pushes.
	type answer struct {
		what   string
		status int
		took   time.Duration
	}
	var answers []answer
	for i := 0; time.Since(locked) < 12*time.Second; i++ {
		time.Sleep(time.Until(locked.Add(time.Duration(i) * 1500 * time.Millisecond))) // the pace of the rounds, not a wait for work
		t.Logf("after %s locked: %s", time.Since(locked).Round(time.Millisecond), waiters(t, watcher, db))
		began := time.Now()
		_, err := a.Client.RegisterPushToken(ctx, client.RegisterRequest{
			DeviceID: fmt.Sprintf("dev-locked-%d", i), Token: fmt.Sprintf("tok-locked-%d", i), Platform: "android",
			AppSourceVersion: "1.6.0", UserID: fmt.Sprintf("locked-%d", i),
		})
		status := http.StatusOK
		if err != nil {
			status = statusOf(err)
		}
		answers = append(answers, answer{"registration", status, time.Since(began)})
		for _, l := range []struct{ what, url string }{{"readyz", e.API.URL + "/readyz"}, {"admin app", e.Admin.URL + "/admin/v1/apps/" + a.ID}} {
			began := time.Now()
			req, _ := http.NewRequest("GET", l.url, nil)
			req.Header.Set("Authorization", "Bearer "+e.AdminToken)
			resp, err := http.DefaultClient.Do(req)
			status := 0
			if err == nil {
				status = resp.StatusCode
				resp.Body.Close()
			}
			answers = append(answers, answer{l.what, status, time.Since(began)})
		}
	}
	t.Logf("after %s locked: %s", time.Since(locked).Round(time.Millisecond), waiters(t, watcher, db))
	unlock()
	for _, an := range answers {
		t.Logf("locked: %s answered %d in %s", an.what, an.status, an.took.Round(time.Millisecond))
	}
	for _, an := range answers {
		// 3 s: the readiness budget of 2 s and room for a loaded machine;
		// a request that waits for a connection the jobs hold takes its
		// whole deadline (8–9 s) and answers 503.
		if an.status != http.StatusOK || an.took > 3*time.Second {
			t.Errorf("with pushes locked: %s answered %d in %s, want 200 within 3 s", an.what, an.status, an.took.Round(time.Millisecond))
		}
	}
	if p := e.WaitFinal(res.PushID, 60*time.Second); p.Status != "done" || p.Counts.Sent != tokens {
		t.Errorf("the push: got %s with %d sent, want done with %d", p.Status, p.Counts.Sent, tokens)
	}
}

// waiters describes, from the database, the node's sessions waiting on a
// lock (by the start of their query) and the pool's connections.
func waiters(t *testing.T, conn *pgx.Conn, db *postgres.DB) string {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT left(regexp_replace(a.query, '\s+', ' ', 'g'), 60) || ' [' || coalesce(l.locktype || ' ' || coalesce(l.relation::regclass::text, '') || ' ' || l.mode, '?') || '; blocked by ' ||
		  coalesce((SELECT string_agg(coalesce(b.application_name, '') || ':' || left(regexp_replace(b.query, '\s+', ' ', 'g'), 40), ' | ') FROM pg_stat_activity b WHERE b.pid = ANY(pg_blocking_pids(a.pid))), '') || ']', count(*)
		FROM pg_stat_activity a LEFT JOIN pg_locks l ON l.pid = a.pid AND NOT l.granted
		WHERE a.wait_event_type = 'Lock' AND a.pid <> pg_backend_pid() GROUP BY 1 ORDER BY 2 DESC`)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	n := 0
	for rows.Next() {
		var q string
		var c int
		if err := rows.Scan(&q, &c); err != nil {
			t.Fatal(err)
		}
		n += c
		fmt.Fprintf(&b, "\n\t%d× %s", c, q)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	s := db.Pool.Stat()
	return fmt.Sprintf("pool %d/%d acquired, %d idle, %d waited for a connection (%s in all); %d sessions wait on a lock:%s",
		s.AcquiredConns(), s.MaxConns(), s.IdleConns(), s.EmptyAcquireCount(), s.EmptyAcquireWaitTime().Round(time.Millisecond), n, b.String())
}

// statusOf is the HTTP status of a client's error (0 when none came).
func statusOf(err error) int {
	if ce := (*client.Error)(nil); errors.As(err, &ce) {
		return ce.StatusCode
	}
	return 0
}

// registerMany registers n devices of a, one user each, over workers
// connections at once.
func registerMany(t *testing.T, a testenv.App, n, workers int) {
	t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				_, err := a.Client.RegisterPushToken(context.Background(), client.RegisterRequest{
					DeviceID: fmt.Sprintf("d%d", i), Token: fmt.Sprintf("big-%d", i), Platform: "android",
					AppSourceVersion: "1.6.0", UserID: fmt.Sprintf("u%d", i),
				})
				if err != nil {
					t.Errorf("register u%d: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
}
