package sqlstore

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestPrefixBound checks that the bound of a prefix is valid UTF-8 and
// that p <= s < bound (or p <= s with none) holds exactly for the strings
// s that start with p, over prefixes ending in characters at the edges of
// UTF-8's lengths, the surrogates and U+10FFFF.
func TestPrefixBound(t *testing.T) {
	edges := []string{"", "a", "z", "~", "\u007f", "\u0080", "ÿ", "\u07ff", "\u0800", "가", "\ud7ff", "\ue000",
		"\uffff", "\U00010000", "😀", "\U0010FFFF", "\U0010FFFF\U0010FFFF", "a\U0010FFFF", "b"}
	var strs []string
	for _, x := range edges {
		for _, y := range edges {
			strs = append(strs, x+y)
			for _, z := range edges[:6] {
				strs = append(strs, x+y+z)
			}
		}
	}
	for _, p := range strs {
		upper, ok := prefixBound(p)
		if ok && !utf8.ValidString(upper) {
			t.Fatalf("prefixBound(%q) = %q, not UTF-8", p, upper)
		}
		if p != "" && strings.Trim(p, "\U0010FFFF") != "" && !ok {
			t.Fatalf("prefixBound(%q): none", p)
		}
		for _, s := range strs {
			in := s >= p && (!ok || s < upper)
			if in != strings.HasPrefix(s, p) {
				t.Fatalf("prefix %q, bound %q (%v): %q in the range %v", p, upper, ok, s, in)
			}
		}
	}
	for p, want := range map[string]string{"c4": "c5", "\u007f": "\u0080", "가": "각", "ÿ": "Ā", "\ud7ff": "\ue000", "a\U0010FFFF": "b", "😀": "😁"} {
		if got, _ := prefixBound(p); got != want {
			t.Errorf("prefixBound(%q) = %q, want %q", p, got, want)
		}
	}
}
