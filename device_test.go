package herald

import "testing"

func TestVersionBelow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    string
		min  [3]int
		want bool
	}{
		{"1.4.9", BadgeSince, true},
		{"1.5.0", BadgeSince, false},
		{"1.5.0-beta.1", BadgeSince, false},
		{"1.10.0", ImageSince, false},
		{"1.5.9", ImageSince, true},
		{"2.0.0", ImageSince, false},
		{"0.9.9+build", ImageSince, true},
		{"garbage", ImageSince, true},
	}
	for _, tt := range tests {
		if got := VersionBelow(tt.v, tt.min); got != tt.want {
			t.Errorf("VersionBelow(%q, %v): got %v, want %v", tt.v, tt.min, got, tt.want)
		}
	}
}
