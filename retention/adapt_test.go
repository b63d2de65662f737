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
