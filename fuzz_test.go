package herald_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/heraldpush/herald"
)

// The fuzz targets of the domain's validators. Their seeds run as ordinary
// tests; .ci/run fuzzes each for a bounded time.

// replacements counts U+FFFD a JSON text states on purpose: the raw
// character and its \ufffd escape. A decoder that invents one more has
// mangled invalid text.
func replacements(body []byte) int {
	return bytes.Count(body, []byte("\uFFFD")) + bytes.Count(bytes.ToLower(body), []byte(`\ufffd`))
}

// surrogateEscape finds a \uD800–\uDFFF escape in any case.
var surrogateEscape = regexp.MustCompile(`(?i)\\ud[89a-f][0-9a-f]{2}`)

func FuzzTextProblems(f *testing.F) {
	for _, s := range []string{
		`{"userId":"u1","title":"hi"}`, `{"title":"\ud83d\ude00"}`, `{"userId":"\ud800"}`, `{"userId":"\udc00"}`,
		`{"t":"\ud83dx"}`, "{\"t\":\"a\xffb\"}", "{\"t\":\"\xed\xa0\x80\"}", `{"a":["\\ud800",{"b":"\uDFFF"}]}`,
		"{\"k\xff\":1}", `"\ud800"`, `{"t":"\ufffd"}`, `[1,{"a":[2,"\ud800"]}]`, `{"a":"\`, `{"a":"\u12`, "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		details := herald.TextProblems(body)
		if len(details) > 10 {
			t.Fatalf("%d details, want at most 10", len(details))
		}
		for _, d := range details {
			if d.Field == "" || d.Reason == "" || !utf8.ValidString(d.Field) {
				t.Fatalf("detail %+v: want a valid field and a reason", d)
			}
		}
		if !json.Valid(body) {
			return
		}
		if !utf8.Valid(body) && len(details) == 0 {
			t.Fatalf("%q holds invalid UTF-8 and was accepted", body)
		}
		if len(details) > 0 && utf8.Valid(body) && !surrogateEscape.Match(body) {
			t.Fatalf("%q refused (%+v) without invalid UTF-8 or a surrogate escape", body, details)
		}
		if len(details) == 0 {
			var v any
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.UseNumber() // numbers beyond float64 are valid JSON
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			if got, stated := countReplacements(v), replacements(body); got > stated {
				t.Fatalf("%q accepted but decodes with %d U+FFFD, %d stated", body, got, stated)
			}
		}
	})
}

// countReplacements counts U+FFFD in every string of a decoded JSON value,
// member names included.
func countReplacements(v any) int {
	switch v := v.(type) {
	case string:
		return strings.Count(v, "\uFFFD")
	case []any:
		n := 0
		for _, e := range v {
			n += countReplacements(e)
		}
		return n
	case map[string]any:
		n := 0
		for k, e := range v {
			n += strings.Count(k, "\uFFFD") + countReplacements(e)
		}
		return n
	}
	return 0
}

func FuzzParseUserID(f *testing.F) {
	for _, s := range []string{
		`"user-1"`, `123`, `"123"`, `-0`, `0`, `-7`, `1.5`, `1e3`, `"  "`, `"a\u0001b"`, `null`, `true`, `{}`, `[1]`,
		`"\ud83d\ude00"`, `"\ud800"`, `"a\udc00"`, "\"a\xffb\"", `"사용자"`, ` 42 `, `0012`, `"\u0000"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		id, reason := herald.ParseUserID(raw)
		if reason != "" {
			if id != "" {
				t.Fatalf("%q refused (%s) but gave %q", raw, reason, id)
			}
			return
		}
		switch {
		case !utf8.ValidString(id):
			t.Fatalf("%q accepted as invalid UTF-8 %q", raw, id)
		case strings.TrimSpace(id) == "":
			t.Fatalf("%q accepted as a blank userId", raw)
		case strings.IndexFunc(id, unicode.IsControl) >= 0:
			t.Fatalf("%q accepted with a control character", raw)
		case utf8.RuneCountInString(id) > herald.MaxUserIDLen:
			t.Fatalf("%q accepted with %d characters", raw, utf8.RuneCountInString(id))
		case strings.Count(id, "\uFFFD") > replacements(raw):
			t.Fatalf("%q accepted as %q: U+FFFD made up", raw, id)
		}
		// The text re-encoded is the same user; so is the integer as text.
		again, _ := json.Marshal(id)
		if got, reason := herald.ParseUserID(again); got != id {
			t.Fatalf("%q gave %q, re-encoded %s gave %q (%s)", raw, id, again, got, reason)
		}
		if n := bytes.TrimSpace(raw); n[0] != '"' && string(n) != "-0" && id != string(n) {
			t.Fatalf("integer userId %s normalised to %q", n, id)
		}
	})
}

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
