package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

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
// every message delivered, none rejected, the usage of processes processes
// for the server. It asserts no timings.
func (b benchJSON) checkFigures(users, requests, processes int) {
	t := b.t
	t.Helper()
	positive := [][]string{
		{"users"}, {"gomaxprocs"},
		{"register", "seconds"}, {"register", "perSecond"},
		{"accept", "requests"}, {"accept", "p50Ms"}, {"accept", "p99Ms"}, {"accept", "maxMs"},
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
	for _, p := range [][]string{{"users"}, {"delivery", "delivered"}, {"ceiling", "sent"}} {
		if got := b.num(p...); got != float64(users) {
			t.Errorf("%v: got %v, want %d", p, got, users)
		}
	}
	if got := b.num("accept", "requests"); got != float64(requests) {
		t.Errorf("accept requests: got %v, want %d", got, requests)
	}
	if got := b.num("delivery", "rejected"); got != 0 {
		t.Errorf("rejected: got %v, want 0", got)
	}
	if got, want := b.num("peakRssBytes"), b.num("server", "peakRssBytes"); got != want {
		t.Errorf("peakRssBytes %v, want the server's %v", got, want)
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
}

// TestBench runs a small `herald bench --json` with the server in process
// on SQLite, as without flags, and checks that every figure is there.
func TestBench(t *testing.T) {
	if testing.Short() {
		t.Skip("bench registers and pushes to 2000 users")
	}
	b, _ := runBenchJSON(t, "--users", "2000")
	b.checkFigures(2000, 4, 1)
	if got := b.str("engine"); got != "sqlite" {
		t.Errorf("engine: got %q, want sqlite", got)
	}
	if got := b.num("nodes"); got != 0 {
		t.Errorf("nodes: got %v, want 0 (in process)", got)
	}
	if got, want := b.num("server", "cpuSeconds"), b.num("benchProcess", "cpuSeconds"); got != want {
		t.Errorf("in process the server's CPU is the bench process's: got %v and %v", got, want)
	}
}

// TestBenchNodes runs `herald bench` with the server as `herald serve`
// processes: one on SQLite, and three on a fresh PostgreSQL schema that is
// dropped after the run. Each node's own usage is reported apart from the
// bench process's.
func TestBenchNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs bench with server processes")
	}
	bin := buildHerald(t)
	t.Run("SQLite", func(t *testing.T) {
		b, _ := runBenchJSON(t, "--users", "1500", "--nodes", "1", "--binary", bin)
		b.checkFigures(1500, 3, 1)
		if got := b.str("engine"); got != "sqlite" {
			t.Errorf("engine: got %q, want sqlite", got)
		}
		if got := b.num("nodes"); got != 1 {
			t.Errorf("nodes: got %v, want 1", got)
		}
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		base := pgtest.BaseURL(t)
		// A pool parameter in the URL reaches the nodes' pools, not the
		// server.
		dbURL := pgtest.WithParams(t, base, map[string]string{"pool_max_conns": "6"})
		b, stderr := runBenchJSON(t, "--users", "1500", "--database-url", dbURL, "--nodes", "3", "--binary", bin)
		b.checkFigures(1500, 3, 3)
		if got := b.str("engine"); got != "postgres" {
			t.Errorf("engine: got %q, want postgres", got)
		}
		if got := b.num("nodes"); got != 3 {
			t.Errorf("nodes: got %v, want 3", got)
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
	})
}

// TestBenchRefusesSeveralNodesOnSQLite: the embedded store is one process.
func TestBenchRefusesSeveralNodesOnSQLite(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--nodes", "2"},
		{"--nodes", "-1"},
		{"--database-url", "mysql://x"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"bench"}, args...), os.Getenv, &stdout, &stderr)
		if err == nil {
			t.Errorf("bench %v: got no error", args)
			continue
		}
		if flag := strings.TrimPrefix(args[0], "--"); !strings.Contains(err.Error(), "--"+flag) {
			t.Errorf("bench %v: got %q, want it to name --%s", args, err, flag)
		}
	}
}
