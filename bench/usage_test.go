package bench

import (
	"testing"
)

func TestParseStatCPU(t *testing.T) {
	t.Parallel()
	// A command name with a space and a parenthesis; utime 250 and stime
	// 50 ticks are fields 14 and 15.
	line := "4242 (herald (x) y) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 50 0 0 20 0 9 0 100 0 0\n"
	got, err := parseStatCPU("4242", []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if got != 3 {
		t.Errorf("got %v CPU-seconds, want 3 (300 ticks of 1/100 s)", got)
	}
	if _, err := parseStatCPU("1", []byte("1 (short) S 1 2 3")); err == nil {
		t.Errorf("a short line: got no error")
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
