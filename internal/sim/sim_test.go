package sim

import (
	"os"

	"github.com/heraldpush/herald/postgres/pgtest"
	"strconv"
	"testing"
	"time"
)

// TestSim runs the simulation over many seeds, in parallel:
// HERALD_SIM_SEED runs one (with the services' log), HERALD_SIM_SEEDS sets
// how many (default 30, to fit the two-minute suite on two shared cores;
// 10 with -short), HERALD_SIM_FIRST the first.
func TestSim(t *testing.T) {
	if s := os.Getenv("HERALD_SIM_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		Run(t, seed, Options{Log: os.Stderr})
		return
	}
	def := 30
	if testing.Short() {
		def = 10
	}
	seeds, first := envInt(t, "HERALD_SIM_SEEDS", def), envInt(t, "HERALD_SIM_FIRST", 1)
	start := time.Now()
	t.Run("seeds", func(t *testing.T) {
		for seed := first; seed < first+seeds; seed++ {
			t.Run(strconv.Itoa(seed), func(t *testing.T) {
				t.Parallel()
				Run(t, uint64(seed), Options{})
			})
		}
	})
	t.Logf("%d seeds in %s (%.2f seeds/s)", seeds, time.Since(start).Round(time.Millisecond), float64(seeds)/time.Since(start).Seconds())
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

// TestSimPostgres runs seeds on PostgreSQL when HERALD_TEST_DATABASE_URL
// is set: HERALD_SIM_PG_SEEDS of them (default 5), or HERALD_SIM_SEED.
func TestSimPostgres(t *testing.T) {
	base := pgtest.BaseURL(t)
	if s := os.Getenv("HERALD_SIM_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		Run(t, seed, Options{Postgres: base, Log: os.Stderr})
		return
	}
	seeds, first := envInt(t, "HERALD_SIM_PG_SEEDS", 5), envInt(t, "HERALD_SIM_FIRST", 1)
	start := time.Now()
	t.Run("seeds", func(t *testing.T) {
		for seed := first; seed < first+seeds; seed++ {
			t.Run(strconv.Itoa(seed), func(t *testing.T) {
				t.Parallel()
				Run(t, uint64(seed), Options{Postgres: base})
			})
		}
	})
	t.Logf("%d seeds in %s (%.2f seeds/s)", seeds, time.Since(start).Round(time.Millisecond), float64(seeds)/time.Since(start).Seconds())
}
