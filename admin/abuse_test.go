package admin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/handler"
	"github.com/heraldpush/herald/identity"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/postgres"
	"github.com/heraldpush/herald/sqlite"
)

// The sign-in and the access records under concurrency and abuse (DESIGN
// 11, "Under concurrency and abuse"): every limit and one-time use is
// decided in the statement that records it, so a burst gets no more than
// the limit, whatever its timing.

// burst runs f n times at once and counts the statuses answered.
func burst(n int, f func(i int) int) map[int]int {
	var mu sync.Mutex
	got := map[int]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			status := f(i)
			mu.Lock()
			got[status]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	return got
}

// post sends a form without a *testing.T of its own (bursts run it on
// goroutines); a transport error is status 0.
func (b *browser) postFrom(path string, form url.Values, from string) int {
	req, _ := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", from)
	resp, err := b.hc.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestSignInBurst (H1): 200 wrong passwords for one email from one
// address at once get exactly 20 judged (401), the rest 429; the right
// password then waits too. On PostgreSQL the burst is split over two
// nodes, each with a store of its own.
func TestSignInBurst(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e := newSignInEnv(t, engine)
		e.operator(t, "park@example.com", herald.RoleOperator)
		nodes := []*browser{e.browser(t)}
		if engine == testenv.Postgres {
			nodes = append(nodes, e.secondNode(t).browser(t))
		}
		got := burst(200, func(i int) int {
			return nodes[i%len(nodes)].postFrom("/login", url.Values{"email": {"park@example.com"}, "password": {"guess"}}, "198.51.100.9")
		})
		if got[http.StatusUnauthorized] != identity.AttemptLimit || got[http.StatusTooManyRequests] != 200-identity.AttemptLimit {
			t.Errorf("200 wrong passwords at once: got %v, want %d × 401 and the rest 429", got, identity.AttemptLimit)
		}
		if resp, _ := e.browser(t).signIn("park@example.com", password, "192.0.2.80"); resp.StatusCode != http.StatusTooManyRequests {
			t.Errorf("the right password after the burst: got %d, want 429", resp.StatusCode)
		}
		// 20 records of the judged attempts; the refused wait for their
		// window's end, then make one record per key with their count.
		if n := len(e.records(t, "POST /login")); n != identity.AttemptLimit {
			t.Errorf("sign-in records during the window: %d, want %d", n, identity.AttemptLimit)
		}
		e.clock.Set(e.clock.Now().Add(identity.AttemptWindow))
		counts := map[string]int{}
		for _, r := range e.records(t, "POST /login") {
			if r.Count > 0 {
				counts[r.IP+r.Email] = r.Count
			}
		}
		// The email's window refused 180 and the right password; the
		// address's window refused the 180 (the right password came from
		// another address).
		if counts["park@example.com"] != 181 || counts["198.51.100.9"] != 180 {
			t.Errorf("aggregated records: %v, want park@example.com 181 and 198.51.100.9 180", counts)
		}
		e.wantVerified(t)
	})
}

// TestTOTPBurst (H1, H2): one TOTP code sent on 12 sessions whose password
// was right, at once, signs in exactly one (on PostgreSQL half of them on
// a second node); 100 wrong codes at once get at most the limit judged.
func TestTOTPBurst(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e := newSignInEnv(t, engine)
		e.operator(t, "seo@example.com", herald.RoleOperator)
		b := e.browser(t)
		b.wantSignedIn("seo@example.com", "/")
		secret := e.enrolTOTP(b)
		const sessions = 12
		nodes := []*signInEnv{e}
		if engine == testenv.Postgres {
			nodes = append(nodes, e.secondNode(t))
		}
		browsers, forms := make([]*browser, sessions), make([]url.Values, sessions)
		for i := range browsers {
			browsers[i] = nodes[i%len(nodes)].browser(t)
			browsers[i].wantSignedIn("seo@example.com", "/login/totp")
			forms[i] = url.Values{"csrf": {browsers[i].csrf("/login/totp")}}
		}
		code := e.code(t, secret, 0)
		got := burst(sessions, func(i int) int {
			forms[i].Set("code", code)
			return browsers[i].postFrom("/login/totp", forms[i], fmt.Sprint("192.0.2.", 100+i))
		})
		if got[http.StatusSeeOther] != 1 || got[http.StatusUnauthorized] != sessions-1 {
			t.Errorf("one code on %d sessions at once: got %v, want one 303 and the rest 401", sessions, got)
		}
		signedIn := 0
		for _, b := range browsers {
			if resp, _ := b.get("/"); resp.StatusCode == http.StatusOK {
				signedIn++
			}
		}
		if signedIn != 1 {
			t.Errorf("sessions signed in with one code: %d, want 1", signedIn)
		}

		// 11 failures of the email so far (the used code); 100 wrong codes
		// at once from another session get 9 more judged.
		w := e.browser(t)
		w.wantSignedIn("seo@example.com", "/login/totp")
		form := url.Values{"csrf": {w.csrf("/login/totp")}, "code": {"000000"}}
		got = burst(100, func(int) int { return w.postFrom("/login/totp", form, "203.0.113.50") })
		if got[http.StatusUnauthorized] != identity.AttemptLimit-(sessions-1) || got[http.StatusTooManyRequests] != 100-(identity.AttemptLimit-(sessions-1)) {
			t.Errorf("100 wrong codes at once after %d failures: got %v, want %d × 401 and the rest 429", sessions-1, got, identity.AttemptLimit-(sessions-1))
		}
	})
}

// TestSignInRecordBounded (H3): a typed email is recorded to 320 bytes,
// and a flood of sign-ins past the limit adds one record per key, not one
// per attempt.
func TestSignInRecordBounded(t *testing.T) {
	t.Parallel()
	e := newSignInEnv(t, testenv.SQLite)
	huge := strings.Repeat("a", 900_000) + "@example.com"
	for i := range 30 {
		e.browser(t).postFrom("/login", url.Values{"email": {huge}, "password": {"guess"}}, fmt.Sprint("198.51.100.", i%2))
	}
	recs := e.records(t, "POST /login")
	if len(recs) != identity.AttemptLimit {
		t.Errorf("records of 30 sign-ins for one email: %d, want %d", len(recs), identity.AttemptLimit)
	}
	for _, r := range recs {
		if len(r.Email) > access.MaxRecordedEmail {
			t.Fatalf("record %d keeps %d bytes of the typed email, want at most %d", r.Seq, len(r.Email), access.MaxRecordedEmail)
		}
	}
	e.clock.Set(e.clock.Now().Add(identity.AttemptWindow))
	recs = e.records(t, "POST /login")
	if len(recs) != identity.AttemptLimit+1 || recs[len(recs)-1].Count != 10 || len(recs[len(recs)-1].Email) != access.MaxRecordedEmail {
		t.Errorf("after the window: %d records, the last %+v; want one more, of the email's 10 refusals", len(recs), recs[len(recs)-1])
	}
}

// TestBearerThrottle (L1): refused bearer tokens from one address at once
// get 20 × 401 and then 429 with Retry-After, and become one record of
// their count; the owner's token from there still works.
func TestBearerThrottle(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e := newSignInEnv(t, engine)
		got := burst(60, func(int) int {
			req, _ := http.NewRequest(http.MethodGet, e.admin.URL+"/admin/v1/apps", nil)
			req.Header.Set("Authorization", "Bearer hop_guess")
			req.Header.Set("X-Forwarded-For", "203.0.113.9")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return 0
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
				return -1
			}
			return resp.StatusCode
		})
		if got[http.StatusUnauthorized] != identity.AttemptLimit || got[http.StatusTooManyRequests] != 60-identity.AttemptLimit {
			t.Errorf("60 refused tokens at once: got %v, want %d × 401, the rest 429 with Retry-After", got, identity.AttemptLimit)
		}
		if res := e.owner(t, http.MethodGet, "/admin/v1/apps", "203.0.113.9"); res.StatusCode != http.StatusOK {
			t.Errorf("the owner's token from the throttled address: got %d, want 200", res.StatusCode)
		}
		e.clock.Set(e.clock.Now().Add(identity.AttemptWindow))
		recs := e.records(t, identity.BearerRoute)
		if len(recs) != 1 || recs[0].Count != 60 || recs[0].IP != "203.0.113.9" || recs[0].Actor != nil {
			t.Errorf("records of refused tokens: %+v, want one of count 60 from 203.0.113.9", recs)
		}
	})
}

// TestChangeWithoutRecord (M1): a change is recorded as intended before it
// is made; when the record of its answer cannot be written, the answer is
// 503 and the intent becomes a record of unknown outcome; when the intent
// cannot be written, nothing changes.
func TestChangeWithoutRecord(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e := newSignInEnv(t, engine)
		e.refuseInserts(t, "access_records")
		if res := e.owner(t, http.MethodPost, "/admin/v1/apps", "192.0.2.7", `{"name":"made without its record"}`); res.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("a change whose record cannot be written: got %d, want 503", res.StatusCode)
		}
		e.allowInserts(t, "access_records")
		apps, err := e.store.ListApps(context.Background())
		if err != nil || len(apps) != 1 {
			t.Fatalf("apps: %d, %v; want the one created", len(apps), err)
		}
		e.clock.Set(e.clock.Now().Add(access.IntentAbandoned))
		recs := e.records(t, "POST /admin/v1/apps")
		if len(recs) != 1 || recs[0].Status != access.StatusUnknown || recs[0].Actor == nil || *recs[0].Actor != herald.OwnerID {
			t.Fatalf("records of the change: %+v, want one by the owner of unknown outcome", recs)
		}
		e.wantVerified(t)

		e.refuseInserts(t, "access_intents")
		if res := e.owner(t, http.MethodPost, "/admin/v1/apps", "192.0.2.7", `{"name":"never made"}`); res.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("a change whose intent cannot be written: got %d, want 503", res.StatusCode)
		}
		e.allowInserts(t, "access_intents")
		if apps, err := e.store.ListApps(context.Background()); err != nil || len(apps) != 1 {
			t.Errorf("apps after the refused intent: %d, %v; want 1", len(apps), err)
		}
	})
}

// TestAccessHeadHTTP (M2): the head the API gives proves, later, that the
// chain was cut: records deleted from its end and the chain's head row set
// back verify without it, not with it; a head not signed with the master
// key is refused.
func TestAccessHeadHTTP(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, engine testenv.Engine) {
		e := newSignInEnv(t, engine)
		for range 4 {
			e.owner(t, http.MethodGet, "/admin/v1/apps", "192.0.2.8")
		}
		res := e.owner(t, http.MethodGet, "/admin/v1/access-records/head", "192.0.2.8")
		var head access.Head
		if err := json.NewDecoder(res.Body).Decode(&head); err != nil || res.StatusCode != http.StatusOK || head.Seq != 4 {
			t.Fatalf("head: %d %+v %v, want 200 at seq 4", res.StatusCode, head, err)
		}
		raw, _ := json.Marshal(head)
		if v := e.verdict(t, string(raw)); !v.OK {
			t.Fatalf("verify with the head: %+v, want ok", v)
		}
		recs := e.records(t, "")
		e.exec(t, `DELETE FROM access_records WHERE seq > 2`)
		e.exec(t, fmt.Sprintf(`UPDATE access_chain SET seq = 2, hash = '%s' WHERE id = 1`, recs[1].Hash))
		if v := e.verdict(t, ""); !v.OK {
			t.Errorf("verify without a head after the cut: %+v; want ok (nothing in the database tells)", v)
		}
		if v := e.verdict(t, string(raw)); v.OK || v.FirstBroken == nil {
			t.Errorf("verify with the head kept before the cut: %+v, want broken", v)
		}
		head.HMAC = strings.Repeat("0", 64)
		forged, _ := json.Marshal(head)
		q := "/admin/v1/access-records/verify?head=" + url.QueryEscape(string(forged))
		if res := e.owner(t, http.MethodGet, q, "192.0.2.8"); res.StatusCode != http.StatusBadRequest {
			t.Errorf("verify with a head not signed by the key: got %d, want 400", res.StatusCode)
		}
	})
}

// TestRecordKeepsDeadline (M6): a record is written within the request's
// deadline (and a second's grace), not a deadline of its own after it, so
// a database that does not answer makes the admin listener answer 503
// within DESIGN 4's 10 seconds.
func TestRecordKeepsDeadline(t *testing.T) {
	t.Parallel()
	seen := make(chan time.Duration, 1)
	e := newSignInEnv(t, testenv.SQLite, func(o *testenv.Options) {
		o.Overrides.HandlerStore = func(s handler.Store) handler.Store { return deadlineSpy{Store: s, seen: seen} }
	})
	began := time.Now()
	e.owner(t, http.MethodGet, "/admin/v1/apps", "192.0.2.9")
	left := <-seen - time.Since(began)
	if left > 9*time.Second {
		t.Errorf("the record's deadline: %v after the request began, want at most the request's 8 s and a second", left)
	}
}

// deadlineSpy tells how long from now the context of an append ends.
type deadlineSpy struct {
	handler.Store
	seen chan time.Duration
}

func (s deadlineSpy) AppendAccessRecords(ctx context.Context, key access.Key, recs []access.Record) ([]access.Record, error) {
	if dl, ok := ctx.Deadline(); ok {
		select {
		case s.seen <- time.Until(dl):
		default:
		}
	}
	return s.Store.AppendAccessRecords(ctx, key, recs)
}

// owner sends an admin API request with the owner's token from an address.
func (e *signInEnv) owner(t *testing.T, method, path, from string, body ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, e.admin.URL+path, strings.NewReader(strings.Join(body, "")))
	req.Header.Set("Authorization", "Bearer "+testenv.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", from)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// records reads the access records of route (every one when ""), through
// the API, which first appends what waits for a record.
func (e *signInEnv) records(t *testing.T, route string) []access.Record {
	t.Helper()
	res := e.owner(t, http.MethodGet, "/admin/v1/access-records?limit=1000", "127.0.0.1")
	var page struct {
		Records []access.Record `json:"records"`
	}
	if err := json.NewDecoder(res.Body).Decode(&page); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("access records: %d, %v", res.StatusCode, err)
	}
	var out []access.Record
	for _, r := range page.Records {
		if route == "" || r.Route == route {
			out = append(out, r)
		}
	}
	return out
}

// verdict verifies the chain through the API, with head when not "".
func (e *signInEnv) verdict(t *testing.T, head string) access.Verdict {
	t.Helper()
	path := "/admin/v1/access-records/verify"
	if head != "" {
		path += "?head=" + url.QueryEscape(head)
	}
	res := e.owner(t, http.MethodGet, path, "127.0.0.1")
	var v access.Verdict
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("verify: %d, %v", res.StatusCode, err)
	}
	return v
}

func (e *signInEnv) wantVerified(t *testing.T) {
	t.Helper()
	if v := e.verdict(t, ""); !v.OK || v.Unsigned != 0 {
		t.Errorf("verify: %+v, want ok, every record signed", v)
	}
}

// exec runs a statement on the store's database behind its back.
func (e *signInEnv) exec(t *testing.T, query string) {
	t.Helper()
	var err error
	switch db := e.db.(type) {
	case *sqlite.DB:
		_, err = db.Writer.ExecContext(context.Background(), query)
	case *postgres.DB:
		_, err = db.Pool.Exec(context.Background(), query)
	default:
		t.Fatalf("exec on %T", e.db)
	}
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// refuseInserts makes every insert into table fail, as a full disk or a
// broken table would; allowInserts undoes it.
func (e *signInEnv) refuseInserts(t *testing.T, table string) {
	t.Helper()
	if e.dbURL == "" {
		e.exec(t, `CREATE TRIGGER refuse_`+table+` BEFORE INSERT ON `+table+` BEGIN SELECT RAISE(ABORT, 'refused'); END`)
		return
	}
	e.exec(t, `CREATE OR REPLACE FUNCTION refuse_insert() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$ LANGUAGE plpgsql`)
	e.exec(t, `CREATE TRIGGER refuse_`+table+` BEFORE INSERT ON `+table+` FOR EACH ROW EXECUTE FUNCTION refuse_insert()`)
}

func (e *signInEnv) allowInserts(t *testing.T, table string) {
	t.Helper()
	if e.dbURL == "" {
		e.exec(t, `DROP TRIGGER refuse_`+table)
		return
	}
	e.exec(t, `DROP TRIGGER refuse_`+table+` ON `+table)
}

// secondNode is another node on the same PostgreSQL database: a store and
// an admin listener of its own, on the same clock.
func (e *signInEnv) secondNode(t *testing.T) *signInEnv {
	t.Helper()
	o := e.opts
	o.DatabaseURL, o.MasterKey = e.dbURL, e.node.MasterKey
	env := testenv.New(t, o)
	return &signInEnv{node: env.Node, db: env.Node.DB, dbURL: e.dbURL, store: env.Store, clock: e.clock, admin: env.Admin, opts: o}
}
