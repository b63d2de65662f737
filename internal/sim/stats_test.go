package sim

import (
	"os"
	"testing"
)

// TestSimStats (HERALD_SIM_STATS=file) writes one seed's step trace to
// file (HERALD_SIM_STATS_SEED, default 3) and logs its steps by call.
func TestSimStats(t *testing.T) {
	if os.Getenv("HERALD_SIM_STATS") == "" {
		t.Skip("HERALD_SIM_STATS not set")
	}
	f, err := os.Create(os.Getenv("HERALD_SIM_STATS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seed := uint64(envInt(t, "HERALD_SIM_STATS_SEED", 3))
	steps := map[string]int{}
	Run(t, seed, Options{Trace: f, Steps: steps})
	t.Log(steps)
}
