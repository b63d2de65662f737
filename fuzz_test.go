package herald_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

// The fuzz targets of the domain's validators. Their seeds run as ordinary
// tests; .ci/run fuzzes each for a bounded time.

// requestGroupOK is the rule of DESIGN.md section 5 said another way: 5 to
// 20 of 0x21–0x7E without ' " \ and backtick, with at least one letter.
var (
	requestGroupChars  = regexp.MustCompile("^[!#-&(-\\[\\]-_a-~]{5,20}$")
	requestGroupLetter = regexp.MustCompile("[A-Za-z]")
)

func FuzzRequestGroupID(f *testing.F) {
	for _, s := range []string{"campaign-1", "abcd", "abcde", "12345", "a2345678901234567890", "a23456789012345678901",
		"ab'cd", `ab"cd`, `ab\cd`, "ab`cd", "ab cd", "한글그룹아이디", "ab\x7fcd", "a!#$%", "\xff\xfeabc", "ab~_["} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		reason := herald.RequestGroupIDProblem(s)
		want := requestGroupChars.MatchString(s) && requestGroupLetter.MatchString(s)
		if (reason == "") != want {
			t.Fatalf("%q: reason %q, want accepted=%v", s, reason, want)
		}
	})
}

func FuzzParseScheduleTime(f *testing.F) {
	for _, s := range []string{"2025-06-11T22:06", "2025-06-11T22:05", "2025-06-11T22:04", "2025-02-30T10:00",
		"2025-03-09T02:30", "2025-11-02T01:30", "2026-06-12T22:05", "2025-06-11 22:06", "2025-06-11T22:06:00",
		"٢٠٢٥-06-11T22:06", "9999-12-31T23:59", "0000-01-01T00:00", "2025-13-01T00:00", "2025-06-11T24:00"} {
		f.Add(s, "Asia/Seoul")
		f.Add(s, "America/New_York")
	}
	// 22:04:30 in Seoul, the example of spec section 2.5.
	received := time.Date(2025, 6, 11, 13, 4, 30, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s, zone string) {
		loc := (herald.App{TimeZone: zone}).Location()
		at, reason := herald.ParseScheduleTime(s, loc, received)
		if reason != "" {
			if !at.IsZero() {
				t.Fatalf("%q refused (%s) but gave %v", s, reason, at)
			}
			return
		}
		if got := at.In(loc).Format("2006-01-02T15:04"); got != s {
			t.Fatalf("%q in %s accepted as %v, which reads %q there", s, loc, at, got)
		}
		if lead := at.Sub(received); lead < herald.ScheduleLead || lead > herald.ScheduleHorizon {
			t.Fatalf("%q accepted %v after the request", s, lead)
		}
	})
}
