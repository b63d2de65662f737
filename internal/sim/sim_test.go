package sim

import (
	"bytes"
	"fmt"
	"os"

	"strconv"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/postgres/pgtest"
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

// TestAdAllowed holds the oracle's model to the law's hours: 20:59 is
// day, 21:00 through 07:59 night, 08:00 day again.
func TestAdAllowed(t *testing.T) {
	day := herald.Consent{Marketing: true}
	both := herald.Consent{Marketing: true, MarketingNight: true}
	at := func(h, m int) time.Time { return time.Date(2026, 12, 2, h, m, 0, 0, time.UTC) }
	for _, c := range []struct {
		consent herald.Consent
		at      time.Time
		want    bool
	}{
		{day, at(20, 59), true}, {day, at(21, 0), false}, {day, at(3, 0), false}, {day, at(7, 59), false}, {day, at(8, 0), true},
		{both, at(23, 0), true}, {herald.Consent{}, at(12, 0), false}, {herald.Consent{MarketingNight: true}, at(23, 0), false},
	} {
		if got := adAllowed(c.consent, c.at); got != c.want {
			t.Errorf("adAllowed(%+v, %s): got %t, want %t", c.consent, c.at.Format("15:04"), got, c.want)
		}
	}
}

// TestSimReplays: a seed replays step for step. A few seeds run twice
// (HERALD_SIM_REPLAY_SEEDS of them, default 4), and their step traces
// must be equal to the byte.
func TestSimReplays(t *testing.T) {
	seeds := envInt(t, "HERALD_SIM_REPLAY_SEEDS", 4)
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		var runs [2]bytes.Buffer
		for i := range runs {
			t.Run(fmt.Sprintf("%d/%d", seed, i), func(t *testing.T) { Run(t, seed, Options{Trace: &runs[i]}) })
		}
		a, b := runs[0].Bytes(), runs[1].Bytes()
		if !bytes.Equal(a, b) {
			n := 0
			for n < min(len(a), len(b)) && a[n] == b[n] {
				n++
			}
			line := bytes.Count(a[:n], []byte("\n")) + 1
			t.Errorf("seed %d diverged on replay at step line %d of %d: %q against %q", seed, line, bytes.Count(a, []byte("\n")),
				firstLine(a[n-min(n, 60):]), firstLine(b[n-min(n, 60):]))
		}
	}
}

func firstLine(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return string(b[:i])
	}
	return string(b)
}
