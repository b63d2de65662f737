package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"
)

// TestBench runs a small `herald bench --json` end to end and checks that
// every figure is there; it asserts no timings.
func TestBench(t *testing.T) {
	if testing.Short() {
		t.Skip("bench registers and pushes to 2000 users")
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"bench", "--users", "2000", "--json"}, os.Getenv, &stdout, &stderr)
	if err != nil {
		t.Fatalf("bench: %v\nstderr:\n%s", err, stderr.String())
	}
	var got map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("decode %q: %v", stdout.String(), err)
	}
	num := func(path ...string) float64 {
		t.Helper()
		var v any = got
		for _, k := range path {
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%v: got %T, want an object", path, v)
			}
			if v, ok = m[k]; !ok {
				t.Fatalf("%v: missing in %s", path, stdout.String())
			}
		}
		f, ok := v.(float64)
		if !ok {
			t.Fatalf("%v: got %v, want a number", path, v)
		}
		return f
	}
	positive := [][]string{
		{"users"}, {"gomaxprocs"},
		{"register", "seconds"}, {"register", "perSecond"},
		{"accept", "requests"}, {"accept", "p50Ms"}, {"accept", "p99Ms"}, {"accept", "maxMs"},
		{"delivery", "delivered"}, {"delivery", "seconds"}, {"delivery", "perSecond"},
		{"peakRssBytes"},
		{"ceiling", "streams"}, {"ceiling", "sent"}, {"ceiling", "seconds"}, {"ceiling", "perSecond"},
		{"ratio"},
	}
	for _, p := range positive {
		if v := num(p...); v <= 0 {
			t.Errorf("%v: got %v, want > 0", p, v)
		}
	}
	if got, want := num("delivery", "delivered"), num("users"); got != want {
		t.Errorf("delivered: got %v, want %v", got, want)
	}
	if got, want := num("ceiling", "sent"), num("users"); got != want {
		t.Errorf("ceiling sent: got %v, want %v", got, want)
	}
	if got := num("accept", "requests"); got != 4 {
		t.Errorf("accept requests: got %v, want 4", got)
	}
	if got := num("delivery", "rejected"); got != 0 {
		t.Errorf("rejected: got %v, want 0", got)
	}
	if s, _ := got["peakRssScope"].(string); s == "" {
		t.Errorf("peakRssScope: missing")
	}
	if s, _ := got["ceiling"].(map[string]any)["client"].(string); s == "" {
		t.Errorf("ceiling.client: missing")
	}
}
