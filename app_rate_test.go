package herald

import (
	"math"
	"testing"
)

func TestSendRateOf(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want int
		ok   bool
	}{
		{1, 1, true},
		{600, 600, true},
		{1.2e5, 120000, true},
		{MaxSendRatePerMinute, MaxSendRatePerMinute, true},
		{0, 0, false},
		{-5, 0, false},
		{1.5, 0, false},
		{MaxSendRatePerMinute + 1, 0, false},
		{1e300, 0, false},
		{math.NaN(), 0, false},
		{math.Inf(1), 0, false},
	} {
		got, ok := SendRateOf(tc.v)
		if got != tc.want || ok != tc.ok {
			t.Errorf("SendRateOf(%v): got (%d, %v), want (%d, %v)", tc.v, got, ok, tc.want, tc.ok)
		}
	}
}

func TestAppSendRate(t *testing.T) {
	if got := (App{}).SendRate(); got != DefaultSendRatePerMinute {
		t.Errorf("unset: got %d, want %d", got, DefaultSendRatePerMinute)
	}
	if got := (App{SendRatePerMinute: 600}).SendRate(); got != 600 {
		t.Errorf("set: got %d, want 600", got)
	}
}
