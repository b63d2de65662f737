package sim

import (
	"os"
	"testing"
)

func TestSimStats(t *testing.T) {
	if os.Getenv("HERALD_SIM_STATS") == "" {
		t.Skip("HERALD_SIM_STATS not set")
	}
	stepStats = map[string]int{}
	Run(t, 3, Options{})
	t.Log(stepStats)
}
