package sqlstore

import "testing"

func TestPrefixEnd(t *testing.T) {
	for _, tc := range []struct {
		prefix, want string
		ok           bool
	}{
		{"a", "b", true},
		{"user-1", "user-2", true},
		{"z", "{", true},
		{"\uBBFC", "\uBBFD", true},
		{"a\uD7FF", "a\uE000", true},
		{"a\U0010FFFF", "b", true},
		{"\U0010FFFF", "", false},
	} {
		got, ok := prefixEnd(tc.prefix)
		if got != tc.want || ok != tc.ok {
			t.Errorf("prefixEnd(%q): got %q %v, want %q %v", tc.prefix, got, ok, tc.want, tc.ok)
		}
	}
}
