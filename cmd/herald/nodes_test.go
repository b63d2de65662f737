package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/delivery"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/fcm/fcmtest"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/postgres/pgtest"
)

// TestNodes runs three `herald serve` processes on one PostgreSQL schema
// and one FCM emulator: what one node accepts, the others see and help
// send; a node killed with SIGKILL mid-push loses nothing; scheduled pushes
// fire once; a dashboard session works on every node.
func TestNodes(t *testing.T) {
	base := pgtest.BaseURL(t)
	if testing.Short() {
		t.Skip("builds the binary, runs three nodes and waits for a scheduled minute")
	}
	const (
		users      = 20000
		perPush    = 500
		killAfter  = 1000
		adminToken = "ha_nodesTestAdminToken0123456789abcdefghijk"
	)
	// maxInFlight is the most sends one node has in flight and
	// uncommitted: the send queue's workers × a window each.
	maxInFlight := delivery.MaxInFlight()
	dbURL := pgtest.NewSchema(t, base, nil)
	nodeURL := pgtest.WithParams(t, dbURL, map[string]string{"pool_max_conns": "8"})
	bin := buildHerald(t)
	// FCM's round trip slowed so that the push is still going when node 1
	// is killed: each node has its most sends in flight.
	emu, emuURL := fcmtest.StartEmulator(t, emulator.Options{Latency: 250 * time.Millisecond})
	var nodes [3]*process
	for i := range nodes {
		nodes[i] = startProcess(t, bin, t.TempDir(), adminToken, emuURL,
			"HERALD_DATABASE_URL="+nodeURL, "HERALD_MASTER_KEY="+testMasterKey)
	}

	// An app made through node 2 is usable through node 3 at once.
	app := nodes[1].newApp(adminToken, "nodes", emuURL)
	c3 := client.New(nodes[2].publicURL, app.APIKey, app.SecretKey, nil)
	registerAll(t, c3, users, 32)

	// Twenty scheduled pushes, each to one user, at the first whole minute
	// far enough ahead (scheduleMinute; in the app's zone, Asia/Seoul).
	fireAt := scheduleMinute()
	scheduled := map[string]bool{}
	for i := range 20 {
		res, err := c3.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{fmt.Sprintf("u%d", i)},
			Title: "scheduled", Content: "c", Options: &client.Options{ScheduleTime: fireAt.In(testenv.Seoul).Format("2006-01-02T15:04")}})
		if err != nil {
			t.Fatalf("scheduled push %d: %v", i, err)
		}
		scheduled[res.PushID] = true
	}

	// A 20,000-user push accepted by node 1; node 1 is killed mid-way.
	c1 := client.New(nodes[0].publicURL, app.APIKey, app.SecretKey, nil)
	var pushIDs []string
	for start := 0; start < users; start += perPush {
		ids := make([]any, perPush)
		for i := range ids {
			ids[i] = fmt.Sprintf("u%d", start+i)
		}
		res, err := c1.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: ids, Title: "all", Content: "c"})
		if err != nil {
			t.Fatalf("push: %v", err)
		}
		pushIDs = append(pushIDs, res.PushID)
	}
	waitFor(t, fmt.Sprintf("%d messages", killAfter), 60*time.Second, func() bool { return emu.Stats().Accepted >= killAfter })
	nodes[0].kill()
	if n := emu.Stats().Accepted; n >= users {
		t.Fatalf("node 1 killed after all %d messages were sent: nothing left to take over", n)
	} else {
		t.Logf("node 1 killed after %d of %d messages", n, users)
	}

	killedAt := time.Now()
	sent := func() map[string]int { return sentByPush(t, emu, pushIDs) }
	// The killed node's jobs are released by a live node once its beat is
	// 9 s old (delivery's heartbeat), not rescued by River after
	// delivery.RescueAfter; the wait allows River's rescue, which the
	// subtest below tells apart.
	waitFor(t, "every token", 4*time.Minute, func() bool { return len(sent()) == users })
	t.Logf("every token sent %v after the kill", time.Since(killedAt).Round(100*time.Millisecond))
	// A resend is recorded when its answer is: the pushes' end says every
	// answer is (a resent token seen at the emulator may not be, yet).
	pgWaitFinished(t, dbURL, pushIDs)

	t.Run("DeadNodeJobsReleasedByHeartbeat", func(t *testing.T) {
		conn := pgConnect(t, dbURL)
		var released, rescued int
		err := conn.QueryRow(context.Background(), `SELECT
			count(*) FILTER (WHERE e->>'error' LIKE '%stopped beating%'),
			count(*) FILTER (WHERE e->>'error' LIKE '%rescued by JobRescuer%')
			FROM river_job, unnest(errors) AS e`).Scan(&released, &rescued)
		if err != nil {
			t.Fatal(err)
		}
		if released == 0 || rescued != 0 {
			t.Errorf("got %d jobs released by a live node's heartbeat and %d rescued by River, want some released and none rescued",
				released, rescued)
		}
	})

	t.Run("NoTokenMissedDuplicatesOnlyInFlight", func(t *testing.T) {
		got := sent()
		resent := pgResentTokens(t, dbURL, pushIDs)
		dups := 0
		for token, n := range got {
			if n > 1 {
				dups++
				if !resent[token] {
					t.Errorf("token %s got %d messages and is not recorded as resent", token, n)
				}
			}
		}
		if len(resent) > maxInFlight {
			t.Errorf("resent: got %d, want at most the %d sends one node has in flight", len(resent), maxInFlight)
		}
		t.Logf("resent recorded: %d; sent twice: %d", len(resent), dups)
	})
	t.Run("WorkedByMoreThanOneNode", func(t *testing.T) {
		if n := sendWorkers(t, dbURL); n < 2 {
			t.Errorf("nodes that worked send jobs: got %d, want more than one", n)
		}
	})
	t.Run("DashboardSessionOnEveryNode", func(t *testing.T) {
		dashboardSessionAcrossNodes(t, nodes[1], nodes[2], adminToken)
	})
	t.Run("ScheduledFireOnce", func(t *testing.T) {
		waitFor(t, "the scheduled pushes", time.Until(fireAt)+60*time.Second, func() bool {
			return len(sentByPushIDs(t, emu, scheduled)) == len(scheduled)
		})
		for id, at := range sentByPushIDs(t, emu, scheduled) {
			if len(at) != 1 {
				t.Errorf("push %s: got %d messages, want 1", id, len(at))
				continue
			}
			if late := at[0].Sub(fireAt); late < 0 || late > time.Second {
				t.Errorf("push %s: sent %v after its time, want within 1s", id, late)
			}
		}
	})
}

// sentByPush counts, per token, the messages of the pushes the emulator
// accepted.
func sentByPush(t *testing.T, emu *emulator.Emulator, pushIDs []string) map[string]int {
	t.Helper()
	want := map[string]bool{}
	for _, id := range pushIDs {
		want[id] = true
	}
	out := map[string]int{}
	for _, r := range emu.Messages("") {
		var m struct {
			Token string
			Data  map[string]string
		}
		if err := json.Unmarshal(r.Message, &m); err != nil {
			t.Fatal(err)
		}
		if want[m.Data["pushId"]] {
			out[m.Token]++
		}
	}
	return out
}

// sentByPushIDs returns when each of the pushes' messages reached the
// emulator.
func sentByPushIDs(t *testing.T, emu *emulator.Emulator, ids map[string]bool) map[string][]time.Time {
	t.Helper()
	out := map[string][]time.Time{}
	for _, r := range emu.Messages("") {
		var m struct{ Data map[string]string }
		if err := json.Unmarshal(r.Message, &m); err != nil {
			t.Fatal(err)
		}
		if id := m.Data["pushId"]; ids[id] {
			out[id] = append(out[id], r.ReceivedAt)
		}
	}
	return out
}

// pgResentTokens reads the tokens whose delivery of the pushes was
// recorded as resent.
func pgResentTokens(t *testing.T, dbURL string, pushIDs []string) map[string]bool {
	t.Helper()
	conn := pgConnect(t, dbURL)
	rows, err := conn.Query(context.Background(), `SELECT token FROM deliveries WHERE resent AND push_id = ANY($1)`, pushIDs)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, tok := range tokens {
		out[tok] = true
	}
	return out
}

// pgWaitFinished waits until every one of the pushes has ended (done or
// failed).
func pgWaitFinished(t *testing.T, dbURL string, pushIDs []string) {
	t.Helper()
	conn := pgConnect(t, dbURL)
	waitFor(t, "the pushes' end", time.Minute, func() bool {
		var open int
		err := conn.QueryRow(context.Background(),
			`SELECT COUNT(*) FROM pushes WHERE id = ANY($1) AND status NOT IN ('done', 'failed')`, pushIDs).Scan(&open)
		if err != nil {
			t.Fatal(err)
		}
		return open == 0
	})
}

// sendWorkers counts the River clients (one per node) that worked jobs of
// the send queue: the fan-outs that send their lone chunk (a 500-user
// push's) and the send jobs of other chunks (retry chunks among them).
func sendWorkers(t *testing.T, dbURL string) int {
	t.Helper()
	var n int
	err := pgConnect(t, dbURL).QueryRow(context.Background(),
		`SELECT COUNT(DISTINCT c) FROM river_job, unnest(attempted_by) AS c WHERE queue = $1`, delivery.QueueSend).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func pgConnect(t *testing.T, dbURL string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// dashboardSessionAcrossNodes signs in on a, uses the session on b, signs
// out on b and finds the session refused on a.
func dashboardSessionAcrossNodes(t *testing.T, a, b *process, token string) {
	t.Helper()
	jar, _ := cookiejar.New(nil) // 127.0.0.1 on any port: one cookie for both nodes
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.PostForm(a.adminURL+"/login", url.Values{"token": {token}})
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in on node A: got %v %v, want 303", resp, err)
	}
	resp.Body.Close()
	page := func(node *process, cookies ...*http.Cookie) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, node.adminURL+"/", nil)
		for _, c := range cookies {
			req.AddCookie(c)
		}
		client := hc
		if len(cookies) > 0 {
			client = &http.Client{CheckRedirect: hc.CheckRedirect} // only the cookies given
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	code, body := page(b)
	m := csrfInput.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		t.Fatalf("node B with node A's session: got %d, want the dashboard (200 with a form)", code)
	}
	u, _ := url.Parse(a.adminURL)
	session := jar.Cookies(u)
	resp, err = hc.PostForm(b.adminURL+"/logout", url.Values{"csrf": {m[1]}})
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out on node B: got %v %v, want 303", resp, err)
	}
	resp.Body.Close()
	// The browser dropped the cookie; a copy of it must not work either.
	if code, _ := page(a, session...); code == http.StatusOK {
		t.Errorf("node A with the session signed out on node B: got 200, want the sign-in page")
	}
}

// scheduleMinute returns the first whole minute at least 65 s ahead. The
// API takes a schedule time (to the minute) at least 60 s after the
// request; the first whole minute 61 s ahead, less one when that was more
// than 119 s away, could be 59 s ahead of a request sent a second later,
// which the API refused.
func scheduleMinute() time.Time {
	at := time.Now().Add(65 * time.Second)
	if m := at.Truncate(time.Minute); m.Before(at) {
		at = m.Add(time.Minute)
	}
	return at
}
