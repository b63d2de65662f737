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
	f, err := os.Create(os.Getenv("HERALD_SIM_STATS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	traceTo = f
	Run(t, 3, Options{})
	t.Log(stepStats)
}
