package audience_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/heraldpush/herald/audience"
)

func TestFormatNumber(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{
		0, math.Copysign(0, -1), 1, -1, 3, 2.5, 0.1, 1e20, 1e21, 123456789012345678, 1e-6, 1e-7, 1.5e-7, -2e-9,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 1e100, 12345.678, 1.0 / 3, 9007199254740993,
	} {
		want, _ := json.Marshal(f)
		if got := audience.FormatNumber(f); got != string(want) {
			t.Errorf("FormatNumber(%v): got %s, want %s", f, got, want)
		}
	}
}

// FuzzFormatNumber: FormatNumber writes every finite number as
// encoding/json does.
func FuzzFormatNumber(f *testing.F) {
	for _, x := range []float64{0, 1, -1.5, 1e21, 1e-7, 123456789, math.MaxFloat64} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		want, _ := json.Marshal(x)
		if got := audience.FormatNumber(x); got != string(want) {
			t.Fatalf("FormatNumber(%v): got %s, want %s", x, got, want)
		}
	})
}
