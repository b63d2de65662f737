package retention

import (
	"testing"
	"time"
)

// TestAdapt: a step's limit doubles while its steps take well under
// StepTarget, halves when one takes longer, and stays within its bounds.
func TestAdapt(t *testing.T) {
	for _, tt := range []struct {
		limit int
		took  time.Duration
		want  int
	}{
		{200, time.Millisecond, 400},
		{200, StepTarget / 2, 200},
		{200, StepTarget + time.Millisecond, 100},
		{200, time.Second, 100},
		{maxLimit, 0, maxLimit},
		{1, time.Second, 1},
	} {
		if got := adapt(tt.limit, tt.took, 1, maxLimit); got != tt.want {
			t.Errorf("adapt(%d, %v): got %d, want %d", tt.limit, tt.took, got, tt.want)
		}
	}
}

// TestPace: the pause after a step is as long as the step when its write
// was the store's only one since the step before, BusyPause times as long
// when others wrote meanwhile.
func TestPace(t *testing.T) {
	for _, tt := range []struct {
		began uint64
		want  time.Duration
	}{
		{0, StepTarget}, // the store counts no writes (Config.Writes unset)
		{1, StepTarget},
		{2, StepTarget * BusyPause},
		{500, StepTarget * BusyPause},
	} {
		if got := Pace(StepTarget, tt.began); got != tt.want {
			t.Errorf("Pace(%v, %d): got %v, want %v", StepTarget, tt.began, got, tt.want)
		}
	}
}
