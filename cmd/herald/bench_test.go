package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/postgres/pgtest"
)

// benchJSON is a decoded `herald bench --json` with accessors that fail
// the test when a figure is missing.
type benchJSON struct {
	t   *testing.T
	raw string
	got map[string]any
}

// runBenchJSON runs `herald bench --json` with args and decodes its answer.
func runBenchJSON(t *testing.T, args ...string) (benchJSON, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append([]string{"bench", "--json"}, args...), os.Getenv, &stdout, &stderr)
	if err != nil {
		t.Fatalf("bench: %v\nstderr:\n%s", err, stderr.String())
	}
	b := benchJSON{t: t, raw: stdout.String()}
	if err := json.Unmarshal(stdout.Bytes(), &b.got); err != nil {
		t.Fatalf("decode %q: %v", stdout.String(), err)
	}
	return b, stderr.String()
}

// value returns the member at path.
func (b benchJSON) value(path ...string) any {
	b.t.Helper()
	var v any = b.got
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			b.t.Fatalf("%v: got %T, want an object", path, v)
		}
		if v, ok = m[k]; !ok {
			b.t.Fatalf("%v: missing in %s", path, b.raw)
		}
	}
	return v
}

func (b benchJSON) num(path ...string) float64 {
	b.t.Helper()
	f, ok := b.value(path...).(float64)
	if !ok {
		b.t.Fatalf("%v: got %v, want a number", path, b.value(path...))
	}
	return f
}

func (b benchJSON) str(path ...string) string {
	b.t.Helper()
	s, ok := b.value(path...).(string)
	if !ok || s == "" {
		b.t.Fatalf("%v: got %v, want a string", path, b.value(path...))
	}
	return s
}

// nums returns the array at path, each element a number.
func (b benchJSON) nums(path ...string) []float64 {
	b.t.Helper()
	arr, ok := b.value(path...).([]any)
	if !ok {
		b.t.Fatalf("%v: got %v, want an array", path, b.value(path...))
	}
	var out []float64
	for _, v := range arr {
		f, ok := v.(float64)
		if !ok {
			b.t.Fatalf("%v: element %v is not a number", path, v)
		}
		out = append(out, f)
	}
	return out
}

// checkFigures checks the figures every run has: all present and positive,
// every message delivered to its own user once, none rejected, requests
// push requests, the usage of processes processes for the server. It
// asserts no timings.
func (b benchJSON) checkFigures(users, requests, processes int) {
	t := b.t
	t.Helper()
	positive := [][]string{
		{"users"}, {"gomaxprocs"},
		{"register", "seconds"}, {"register", "perSecond"},
		{"accept", "requests"}, {"accept", "usersPerRequest"}, {"accept", "workers"},
		{"accept", "p50Ms"}, {"accept", "p99Ms"}, {"accept", "maxMs"},
		{"delivery", "delivered"}, {"delivery", "seconds"}, {"delivery", "perSecond"},
		{"peakRssBytes"},
		{"server", "peakRssBytes"}, {"server", "cpuSeconds"}, {"server", "cpuSecondsPer1000Deliveries"},
		{"benchProcess", "peakRssBytes"}, {"benchProcess", "cpuSeconds"}, {"benchProcess", "cpuSecondsPer1000Deliveries"},
		{"ceiling", "streams"}, {"ceiling", "sent"}, {"ceiling", "seconds"}, {"ceiling", "perSecond"},
		{"ratio"},
	}
	for _, p := range positive {
		if v := b.num(p...); v <= 0 {
			t.Errorf("%v: got %v, want > 0", p, v)
		}
	}
	for _, p := range [][]string{{"users"}, {"delivery", "delivered"}, {"delivery", "usersReached"}, {"ceiling", "sent"}} {
		if got := b.num(p...); got != float64(users) {
			t.Errorf("%v: got %v, want %d", p, got, users)
		}
	}
	if got := b.num("accept", "requests"); got != float64(requests) {
		t.Errorf("accept requests: got %v, want %d", got, requests)
	}
	for _, p := range [][]string{{"delivery", "rejected"}, {"delivery", "duplicates"}} {
		if got := b.num(p...); got != 0 {
			t.Errorf("%v: got %v, want 0", p, got)
		}
	}
	if p50, p99, most := b.num("accept", "p50Ms"), b.num("accept", "p99Ms"), b.num("accept", "maxMs"); p50 > p99 || p99 > most {
		t.Errorf("accept: got p50 %v, p99 %v, max %v; want them in order", p50, p99, most)
	}
	if got, want := b.num("peakRssBytes"), b.num("server", "peakRssBytes"); got != want {
		t.Errorf("peakRssBytes %v, want the server's %v", got, want)
	}
	if got, want := b.num("ratio"), b.num("delivery", "perSecond")/b.num("ceiling", "perSecond"); got != want {
		t.Errorf("ratio: got %v, want deliveries/s over the ceiling's, %v", got, want)
	}
	if got := b.num("server", "processes"); got != float64(processes) {
		t.Errorf("server processes: got %v, want %d", got, processes)
	}
	for _, p := range [][]string{{"server", "peakRssBytesPerProcess"}, {"server", "cpuSecondsPerProcess"}} {
		vs := b.nums(p...)
		if len(vs) != processes {
			t.Errorf("%v: got %v, want %d figures", p, vs, processes)
		}
		for i, v := range vs {
			// CPU time is counted in clock ticks (10 ms): a node that did
			// little in a small run can read 0, never less.
			if v < 0 || v == 0 && p[1] == "peakRssBytesPerProcess" {
				t.Errorf("%v[%d]: got %v, want > 0 (every node is running)", p, i, v)
			}
		}
	}
	b.str("peakRssScope")
	b.str("server", "scope")
	b.str("benchProcess", "scope")
	b.str("ceiling", "client")
	b.str("accept", "endpoint")
	if got := b.num("sendRatePerMinute"); got != herald.MaxSendRatePerMinute {
		t.Errorf("sendRatePerMinute: got %v, want the most an app may have, %d", got, herald.MaxSendRatePerMinute)
	}
}

// checkShape checks the run's mode, engine and where its server ran.
func (b benchJSON) checkShape(mode, engine, serverProcess string, nodes int) {
	b.t.Helper()
	for _, c := range []struct{ key, want string }{{"mode", mode}, {"engine", engine}, {"serverProcess", serverProcess}} {
		if got := b.str(c.key); got != c.want {
			b.t.Errorf("%s: got %q, want %q", c.key, got, c.want)
		}
	}
	if got := b.num("nodes"); got != float64(nodes) {
		b.t.Errorf("nodes: got %v, want %d", got, nodes)
	}
}

// TestBench runs a small `herald bench --json --in-process` on SQLite and
// checks that every figure is there, the server's usage being the bench
// process's.
func TestBench(t *testing.T) {
	if testing.Short() {
		t.Skip("bench registers and pushes to 1000 users")
	}
	b, _ := runBenchJSON(t, "--users", "1000", "--in-process")
	b.checkFigures(1000, 2, 1)
	b.checkShape("users", "sqlite", "in-process", 0)
	if got, want := b.num("server", "cpuSeconds"), b.num("benchProcess", "cpuSeconds"); got != want {
		t.Errorf("in process the server's CPU is the bench process's: got %v and %v", got, want)
	}
}

// TestBenchMarketing runs `herald bench --marketing --marketing-cap 5`:
// the pushes are marketing, judged on each device's consent and claimed
// against the app's frequency cap, and every user still gets the one
// push (the cap is 5 a day).
func TestBenchMarketing(t *testing.T) {
	if testing.Short() {
		t.Skip("bench registers and pushes to 1000 users")
	}
	b, _ := runBenchJSON(t, "--users", "1000", "--in-process", "--marketing", "--marketing-cap", "5")
	b.checkFigures(1000, 2, 1)
	b.checkShape("users", "sqlite", "in-process", 0)
}

// TestBenchModes runs `herald bench` as it runs without flags, the server a
// `herald serve` process of its own on SQLite, in each mode: 1,000 users
// in 2 requests of 500 users, 5 of 200 messages, one all-users push, one
// segment push over the users' imported tags, or one push of templates
// in three languages (every message checked as rendered for its device).
// The server's CPU and RSS are its own, apart from the bench process's.
func TestBenchModes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs bench with a server process five times")
	}
	bin := buildHerald(t)
	for _, tc := range []struct {
		mode     string
		requests int
		per      int
		endpoint string
	}{
		{"users", 2, 500, "/api/push/v2/users"},
		{"messages", 5, 200, "/api/push/v2/messages"},
		{"all", 1, 1000, "/api/push/v2/all"},
		{"segment", 1, 1000, "/api/push/v2/segments"},
		{"template", 1, 1000, "/api/push/v2/all"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			b, _ := runBenchJSON(t, "--users", "1000", "--mode", tc.mode, "--binary", bin)
			b.checkFigures(1000, tc.requests, 1)
			b.checkShape(tc.mode, "sqlite", "separate", 1)
			if got := b.str("accept", "endpoint"); got != tc.endpoint {
				t.Errorf("accept endpoint: got %q, want %q", got, tc.endpoint)
			}
			if got := b.num("accept", "usersPerRequest"); got != float64(tc.per) {
				t.Errorf("accept usersPerRequest: got %v, want %d", got, tc.per)
			}
			tagged := tc.mode == "segment" || tc.mode == "template"
			if _, ok := b.got["tags"]; ok != tagged {
				t.Errorf("tags figures: got %v, want them only in segment and template modes", b.got["tags"])
			} else if tagged && (b.num("tags", "rows") != 1000 || b.num("tags", "perSecond") <= 0) {
				t.Errorf("tags: got %v, want 1000 rows imported at a rate", b.got["tags"])
			}
			if _, ok := b.got["baseline"]; ok != tagged {
				t.Errorf("baseline: got %v, want it only in segment and template modes", b.got["baseline"])
			} else if tagged && (b.num("baseline", "delivered") != 1000 || b.num("baseline", "rateRatio") <= 0 ||
				b.str("baseline", "endpoint") != "/api/push/v2/all") {
				t.Errorf("baseline: got %v, want 1000 delivered by a plain all-users push, and the ratio of the rates", b.got["baseline"])
			}
			if tc.requests == 1 && (b.num("accept", "p50Ms") != b.num("accept", "maxMs") || b.num("accept", "p99Ms") != b.num("accept", "maxMs")) {
				t.Errorf("one push: got p50 %v, p99 %v, max %v; want the one request's latency in each",
					b.num("accept", "p50Ms"), b.num("accept", "p99Ms"), b.num("accept", "maxMs"))
			}
			if _, ok := b.got["database"]; ok {
				t.Errorf("database figures on SQLite: %v", b.got["database"])
			}
			if got := b.str("peakRssScope"); got != b.str("server", "scope") || strings.Contains(got, "emulator") {
				t.Errorf("peakRssScope: got %q, want the server process's alone", got)
			}
		})
	}
}

// TestBenchUrgent runs `herald bench --mode urgent`: the blast alone, then
// again with high one-user probes of a second app of the project beside
// it, every probe reaching the emulator, its latencies and the blast's
// rates reported. (How fast is a benchmark's question, not this test's.)
func TestBenchUrgent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs bench with a server process")
	}
	bin := buildHerald(t)
	b, _ := runBenchJSON(t, "--users", "1000", "--mode", "urgent", "--project-rate", "60000", "--probe-every", "10ms", "--binary", bin)
	b.checkFigures(1000, 1, 1)
	b.checkShape("urgent", "sqlite", "separate", 1)
	if got := b.str("urgent", "priority"); got != "high" {
		t.Errorf("urgent priority: got %q, want high", got)
	}
	if b.num("urgent", "probes") < 1 || b.num("urgent", "lost") != 0 || b.num("urgent", "p99Ms") <= 0 || b.num("urgent", "idleP50Ms") <= 0 {
		t.Errorf("urgent probes: got %v, want some, none lost, with their latencies", b.got["urgent"])
	}
	if b.num("urgent", "blastPerSecond") <= 0 || b.num("urgent", "rateRatio") <= 0 {
		t.Errorf("urgent blast: got %v, want its rate beside the probes and the ratio to its rate alone", b.got["urgent"])
	}
}

// TestBenchNodes runs `herald bench` with the server as three `herald
// serve` processes on a fresh PostgreSQL schema that is dropped after the
// run. Each node's own usage is reported apart from the bench process's.
func TestBenchNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs bench with server processes")
	}
	base := pgtest.BaseURL(t)
	bin := buildHerald(t)
	// A pool parameter in the URL reaches the nodes' pools, not the
	// server.
	dbURL := pgtest.WithParams(t, base, map[string]string{"pool_max_conns": "6"})
	b, stderr := runBenchJSON(t, "--users", "1500", "--database-url", dbURL, "--nodes", "3", "--binary", bin)
	b.checkFigures(1500, 3, 3)
	b.checkShape("users", "postgres", "separate", 3)
	// PostgreSQL's own work per phase: WAL written, and (on this machine)
	// its processes' CPU, per 1,000 registrations and deliveries.
	for _, phase := range []string{"register", "deliver"} {
		if got := b.num("database", phase, "walBytes"); !(got > 0) {
			t.Errorf("database.%s.walBytes: got %v, want the WAL the phase wrote", phase, got)
		}
		if got := b.num("database", phase, "cpuSeconds"); !(got > 0) {
			t.Errorf("database.%s.cpuSeconds: got %v, want PostgreSQL's CPU time over the phase", phase, got)
		}
		if got, want := b.num("database", phase, "cpuSecondsPer1000"), b.num("database", phase, "cpuSeconds")*1000/1500; math.Abs(got-want) > 1e-9 {
			t.Errorf("database.%s.cpuSecondsPer1000: got %v, want %v", phase, got, want)
		}
	}
	m := regexp.MustCompile(`PostgreSQL schema (herald_bench_[0-9a-f]+)`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("stderr names no schema:\n%s", stderr)
	}
	var n int
	if err := pgConnect(t, base).QueryRow(context.Background(), `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, m[1]).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("schema %s still exists after the run, want it dropped", m[1])
	}
}

// TestBenchSetup: the server is one herald serve process of this
// executable unless --in-process or --nodes 0 say otherwise.
func TestBenchSetup(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args      []string
		nodes     int
		inProcess bool
		binary    string
	}{
		{nil, 1, false, exe},
		{[]string{"--binary", "/x/herald"}, 1, false, "/x/herald"},
		{[]string{"--in-process"}, 0, true, ""},
		{[]string{"--nodes", "0"}, 0, true, ""},
		{[]string{"--in-process", "--nodes", "0"}, 0, true, ""},
		{[]string{"--database-url", "postgres://h/db"}, 1, false, exe},
		{[]string{"--database-url", "postgres://h/db", "--nodes", "3"}, 3, false, exe},
		{[]string{"--database-url", "postgres://h/db", "--in-process"}, 0, true, ""},
	} {
		var b benchSetup
		fs := flag.NewFlagSet("bench", flag.ContinueOnError)
		b.flags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if err := b.resolve(fs); err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if b.nodes != tc.nodes || b.inProcess != tc.inProcess || b.binary != tc.binary {
			t.Errorf("%v: got %d nodes, in process %v, binary %q; want %d, %v, %q",
				tc.args, b.nodes, b.inProcess, b.binary, tc.nodes, tc.inProcess, tc.binary)
		}
	}
}

// TestBenchRefuses: several nodes on SQLite (the embedded store is one
// process), an unknown mode, and flags that contradict one another.
func TestBenchRefuses(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--nodes", "2"},
		{"--nodes", "-1"},
		{"--database-url", "mysql://x"},
		{"--mode", "topics"},
		{"--in-process", "--nodes", "2"},
		{"--in-process", "--binary", "/bin/true"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"bench"}, args...), os.Getenv, &stdout, &stderr)
		if err == nil {
			t.Errorf("bench %v: got no error", args)
			continue
		}
		if flag := args[len(args)-2]; !strings.Contains(err.Error(), flag) {
			t.Errorf("bench %v: got %q, want it to name %s", args, err, flag)
		}
	}
}

// TestBenchEvents: with --open-rate every device reports the push it got
// through the SDK API, a fraction of them opened too; every event counts
// and the pushes' counts (read through the admin API) hold them all.
func TestBenchEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("bench registers, pushes to and reports events of 1000 users")
	}
	b, _ := runBenchJSON(t, "--users", "1000", "--mode", "messages", "--open-rate", "0.3", "--in-process")
	b.checkFigures(1000, 5, 1)
	for _, c := range []struct {
		key  string
		want float64
	}{
		{"openRate", 0.3}, {"requests", 1000}, {"events", 1300}, {"accepted", 1300}, {"ignored", 0},
		{"received", 1000}, {"opened", 300},
	} {
		if got := b.num("events", c.key); got != c.want {
			t.Errorf("events.%s: got %v, want %v", c.key, got, c.want)
		}
	}
	if b.num("events", "perSecond") <= 0 || b.num("events", "p99Ms") <= 0 {
		t.Errorf("events: got %v events/s, p99 %vms, want both measured", b.num("events", "perSecond"), b.num("events", "p99Ms"))
	}
}
