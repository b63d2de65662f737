package sim

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// TestSim runs the simulation over many seeds: HERALD_SIM_SEED runs one
// (with the services' log), HERALD_SIM_SEEDS sets how many (default 200),
// HERALD_SIM_FIRST the first.
func TestSim(t *testing.T) {
	if s := os.Getenv("HERALD_SIM_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		Run(t, seed, Options{Log: os.Stderr})
		return
	}
	seeds, first := envInt(t, "HERALD_SIM_SEEDS", 200), envInt(t, "HERALD_SIM_FIRST", 1)
	start := time.Now()
	failed := 0
	for seed := first; seed < first+seeds; seed++ {
		ok := t.Run(strconv.Itoa(seed), func(t *testing.T) { Run(t, uint64(seed), Options{}) })
		if !ok {
			failed++
		}
	}
	t.Logf("%d seeds in %s (%.1f seeds/s), %d failed", seeds, time.Since(start).Round(time.Millisecond),
		float64(seeds)/time.Since(start).Seconds(), failed)
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return n
}
