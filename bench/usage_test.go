package bench

import (
	"testing"
)

func TestParseStat(t *testing.T) {
	t.Parallel()
	// A command name with a space and parentheses; the parent is field 4,
	// utime 250 and stime 50 ticks fields 14 and 15, the reaped children's
	// cutime 700 and cstime 100 fields 16 and 17.
	line := "4242 (herald (x) y) S 17 4242 4242 0 -1 4194560 1234 0 0 0 250 50 700 100 20 0 9 0 100 0 0\n"
	got, err := parseStat("4242", line)
	if err != nil {
		t.Fatal(err)
	}
	want := procStat{comm: "herald (x) y", ppid: "17", cpu: 3, childrenCPU: 8}
	if got != want {
		t.Errorf("got %+v, want %+v (ticks of 1/100 s)", got, want)
	}
	for _, bad := range []string{"1 (short) S 1 2 3", "1 no name S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15", "1 (x) S 1 2 3 4 5 6 7 8 9 10 u 12 13 14 15"} {
		if _, err := parseStat("1", bad); err == nil {
			t.Errorf("%q: got no error", bad)
		}
	}
}

func TestReadProcessUsageSelf(t *testing.T) {
	t.Parallel()
	// Burn some CPU so that the reading is above zero whatever the clock
	// granularity: bounded by count.
	x := 0
	for i := range 200_000_000 {
		x += i % 7
	}
	u, err := ReadProcessUsage("self")
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	if u.CPUSeconds <= 0 || u.PeakRSSBytes <= 0 {
		t.Errorf("got %+v (after %d), want CPU time and peak RSS above zero", u, x)
	}
}

func TestUsageMeter(t *testing.T) {
	t.Parallel()
	reads := [][]ProcessUsage{
		{{CPUSeconds: 1, PeakRSSBytes: 10}, {CPUSeconds: 2, PeakRSSBytes: 20}},
		{{CPUSeconds: 4, PeakRSSBytes: 30}, {CPUSeconds: 3, PeakRSSBytes: 40}},
	}
	m := &usageMeter{scope: "two", read: func() ([]ProcessUsage, error) {
		r := reads[0]
		reads = reads[1:]
		return r, nil
	}}
	if err := m.begin(); err != nil {
		t.Fatal(err)
	}
	u, err := m.finish(2000)
	if err != nil {
		t.Fatal(err)
	}
	if u.Processes != 2 || u.CPUSeconds != 4 || u.PeakRSSBytes != 70 || u.CPUSecondsPer1000Deliveries != 2 {
		t.Errorf("got %+v, want 2 processes, 4 CPU-s (3+1), 70 bytes peak, 2 CPU-s per 1,000", u)
	}
	if len(u.CPUSecondsPerProcess) != 2 || u.CPUSecondsPerProcess[0] != 3 || u.CPUSecondsPerProcess[1] != 1 {
		t.Errorf("per process: got %v, want [3 1]", u.CPUSecondsPerProcess)
	}
}
