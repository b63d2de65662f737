package retention_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/server"
)

// EnvMeasure runs TestMeasureRetention, which reports figures and asserts
// none: HERALD_RETENTION_MEASURE=1 (HERALD_RETENTION_MEASURE_DELIVERIES
// and HERALD_RETENTION_MEASURE_TOKENS size it).
const EnvMeasure = "HERALD_RETENTION_MEASURE"

// TestMeasureRetention measures retention on the embedded store: a store
// holding old pushes' deliveries, chunks and events (made in SQL) is
// pruned while a push to every device of an app runs, beside the same
// push without pruning: the push's deliveries a second, the accept
// latency of small pushes sent meanwhile, and the file's size before and
// after.
func TestMeasureRetention(t *testing.T) {
	if os.Getenv(EnvMeasure) == "" {
		t.Skip("a measurement, not a test: set " + EnvMeasure + "=1")
	}
	testenv.SQLiteOnly(t, "the embedded store's writer and file")
	deliveries := testenv.EnvInt(EnvMeasure+"_DELIVERIES", 1_000_000)
	tokens := testenv.EnvInt(EnvMeasure+"_TOKENS", 100_000)
	clk := &testenv.Clock{}
	now := time.Now()
	clk.Run(now)
	e := testenv.Start(t, testenv.Options{Overrides: server.Overrides{Clock: clk.Now}, QuietLog: true})
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true})
	e.Register(a, "tok-", "u1")
	// Today's run made before the store is filled: the node's own ticks
	// (River's, every minute) find it done until the clock moves a day.
	runDay(t, e)
	began := time.Now()
	fill(t, e.DB.Writer, a.ID, deliveries, tokens, now.Add(-500*day))
	t.Logf("store: %d old pushes' %d deliveries, %d chunks, %d events; %d devices; made in %v; %.0f MB",
		oldPushes, deliveries, oldPushes*chunksPerPush, deliveries/2, tokens, time.Since(began).Round(time.Second), fileMB(t, e))

	without := measurePush(t, e, a, tokens)
	t.Logf("without pruning: %s", without)

	clk.Run(now.Add(day)) // a new day: the day's run begins
	pruned := make(chan time.Duration, 1)
	go func() {
		began := time.Now()
		for {
			done, err := e.Node.Retention.Tick(context.Background())
			if err != nil {
				t.Errorf("retention tick: %v", err)
				break
			}
			if done {
				break
			}
		}
		pruned <- time.Since(began)
	}()
	with := measurePush(t, e, a, tokens)
	t.Logf("while pruning:   %s", with)
	held := heldSeconds(t, e)
	t.Logf("pruning held the writer %.1f s of the push's %.1f s (%.1f %%)", held, with.took.Seconds(), 100*held/with.took.Seconds())
	took := <-pruned
	var left int
	if err := e.DB.Reader.QueryRow(`SELECT COUNT(*) FROM deliveries`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	run, err := e.Store.RetentionRun(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(scrape(t, e), "\n") {
		if strings.HasPrefix(line, "herald_retention_step_seconds_bucket") || strings.HasPrefix(line, "herald_retention_step_seconds_count") {
			t.Log(line)
		}
	}
	t.Logf("pruning took %v, its longest step %v (%s), deleted %v (%d delivery rows left); file %.0f MB after",
		took.Round(time.Second), run.Longest.Round(time.Millisecond), run.LongestStep, run.Deleted, left, fileMB(t, e))
}

// heldSeconds is how long retention's steps have held the writer so far,
// all steps together (herald_retention_step_seconds_sum).
func heldSeconds(t *testing.T, e *testenv.Harness) float64 {
	t.Helper()
	var sum float64
	for _, line := range strings.Split(scrape(t, e), "\n") {
		if strings.HasPrefix(line, "herald_retention_step_seconds_sum") {
			f := strings.Fields(line)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err != nil {
				t.Fatalf("metrics: %q: %v", line, err)
			}
			sum += v
		}
	}
	return sum
}

// The old pushes fill makes: each with its share of the deliveries, a
// few chunks of slots, and half as many events as deliveries.
const (
	oldPushes     = 400
	chunksPerPush = 5
	slotBytes     = 40_000 // a chunk's slots: about 250 tokens' worth
)

// fill writes the old pushes (finished at finished) and the app's tokens
// devices in SQL, each table in one statement.
func fill(t *testing.T, db *sql.DB, appID string, deliveries, tokens int, finished time.Time) {
	t.Helper()
	at := finished.UnixMilli()
	per := deliveries / oldPushes
	for _, q := range []struct {
		query string
		args  []any
	}{
		{`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < ? - 1)
			INSERT INTO pushes (id, app_id, kind, status, marketing, is_marketing_opt, title, content, requested_users,
				server_actions_half, created_at, started_at, finished_at, fanout_done)
			SELECT printf('push_old%014d', i), ?, 'all', 'done', 0, 0, 'old title', 'old content', ?, ?, ?, ?, ?, 1 FROM n`,
			[]any{oldPushes, appID, per, 2 * per, at, at, at}},
		{`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < ? - 1)
			INSERT INTO deliveries (push_id, seq, recipient_idx, user_id, device_id, token, platform, app_source_version,
				token_updated_at, chunk, state, reason, error)
			SELECT printf('push_old%014d', i / ?), i, 0, 'user-' || i, 'dev-' || i, printf('tok-%0150d', i), 'android', '1.6.0',
				?, 0, 'failed', '', 'UNAVAILABLE' FROM n`,
			[]any{deliveries, per, at}},
		{`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < ? - 1)
			INSERT INTO push_chunks (push_id, chunk, done, size, settled, sent, slots)
			SELECT printf('push_old%014d', i / ?), i % ?, 1, 250, 250, 250, randomblob(?) FROM n`,
			[]any{oldPushes * chunksPerPush, chunksPerPush, chunksPerPush, slotBytes}},
		{`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < ? - 1)
			INSERT INTO push_events (push_id, device_id, type, at)
			SELECT printf('push_old%014d', i / ?), 'dev-' || i, 'received', ? FROM n`,
			[]any{deliveries / 2, per / 2, at}},
		{`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < ? - 1)
			INSERT INTO users (app_id, user_id, state, created_at, updated_at) SELECT ?, printf('m%07d', i), 'registered', ?, ? FROM n`,
			[]any{tokens, appID, at, at}},
		{`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < ? - 1)
			INSERT INTO devices (app_id, device_id, token, platform, app_source_version, user_id, marketing, marketing_night,
				created_at, token_updated_at)
			SELECT ?, printf('md%07d', i), printf('measure-%0150d', i), 'android', '1.6.0', printf('m%07d', i), 0, 0, ?, ? FROM n`,
			[]any{tokens, appID, at, at}},
		{`PRAGMA wal_checkpoint(TRUNCATE)`, nil},
	} {
		if _, err := db.Exec(q.query, q.args...); err != nil {
			t.Fatalf("fill: %v\n%s", err, q.query)
		}
	}
}

func fileMB(t *testing.T, e *testenv.Harness) float64 {
	t.Helper()
	if _, err := e.DB.Writer.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(e.DBPath)
	if err != nil {
		t.Fatal(err)
	}
	return float64(fi.Size()) / 1e6
}

// pushFigures are what measurePush reports.
type pushFigures struct {
	tokens     int
	took       time.Duration
	accepts    []time.Duration
	bigAccept  time.Duration
	perSecond  float64
	acceptsErr int
}

func (f pushFigures) String() string {
	slices.Sort(f.accepts)
	q := func(p float64) time.Duration {
		if len(f.accepts) == 0 {
			return 0
		}
		return f.accepts[min(len(f.accepts)-1, int(p*float64(len(f.accepts))))].Round(100 * time.Microsecond)
	}
	return fmt.Sprintf("%d tokens in %v, %.0f deliveries/s; its accept %v; %d small pushes accepted meanwhile: p50 %v, p99 %v, max %v (%d errors)",
		f.tokens, f.took.Round(100*time.Millisecond), f.perSecond, f.bigAccept.Round(100*time.Microsecond), len(f.accepts),
		q(0.5), q(0.99), q(1), f.acceptsErr)
}

// measurePush sends a push to every device of a (tokens of them, and u1's)
// and, until it finished, a small push to u1 every 50 ms.
func measurePush(t *testing.T, e *testenv.Harness, a testenv.App, tokens int) pushFigures {
	t.Helper()
	ctx := context.Background()
	var f pushFigures
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			began := time.Now()
			_, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "small", Content: "meanwhile"})
			if err != nil {
				f.acceptsErr++
				continue
			}
			f.accepts = append(f.accepts, time.Since(began))
		}
	})
	began := time.Now()
	res, err := a.Client.PushAll(ctx, client.PushAllRequest{Title: "to everyone", Content: "measure"})
	if err != nil {
		t.Fatal(err)
	}
	f.bigAccept = time.Since(began)
	var p struct {
		Status                string
		CreatedAt, FinishedAt *time.Time
		Counts                struct{ Sent int }
	}
	testenv.WaitFor(t, "the push to finish", 15*time.Minute, func() bool {
		time.Sleep(200 * time.Millisecond) // polling interval
		e.AdminJSON("GET", "/admin/v1/pushes/"+res.PushID, nil, &p)
		return p.FinishedAt != nil
	})
	close(stop)
	wg.Wait()
	if p.Status != "done" || p.Counts.Sent != tokens+1 {
		t.Errorf("the push: got %s with %d sent, want done with %d", p.Status, p.Counts.Sent, tokens+1)
	}
	f.tokens = p.Counts.Sent
	f.took = p.FinishedAt.Sub(*p.CreatedAt)
	f.perSecond = float64(f.tokens) / f.took.Seconds()
	return f
}
