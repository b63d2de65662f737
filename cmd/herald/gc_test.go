package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestTuneGC: serve's collector settings apply unless GOGC or GOMEMLIMIT
// say otherwise. Not parallel: it changes the process's collector.
func TestTuneGC(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
	tuneGC(func(k string) string { return map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}[k] })
	if p, l := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); p != 100 || l != math.MaxInt64 {
		t.Errorf("with GOGC and GOMEMLIMIT set: got GC percent %d and limit %d, want them left alone", p, l)
	}
	tuneGC(func(string) string { return "" })
	if p, l := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); p != gcPercent || l != memoryLimit {
		t.Errorf("unset: got GC percent %d and limit %d, want %d and %d", p, l, gcPercent, memoryLimit)
	}
}
