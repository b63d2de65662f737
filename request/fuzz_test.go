package request_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/request"
)

// The fuzz targets of the body's readers. Their seeds run as ordinary
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
		"{\"k\xff\":1}", `"\ud800"`, `{"t":"\ufffd"}`, `[1,{"a":[2,"\ud800"]}]`, `{"a":"b","a":"b"}`, `{"a":"\`, `{"a":"\u12`, "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		details := request.TextProblems(body)
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
		if len(details) > 0 && utf8.Valid(body) && !surrogateEscape.Match(body) && !allTwice(details) {
			t.Fatalf("%q refused (%+v) without invalid UTF-8, a surrogate escape or a member written twice", body, details)
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
		id, reason := request.ParseUserID(raw)
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
		if got, reason := request.ParseUserID(again); got != id {
			t.Fatalf("%q gave %q, re-encoded %s gave %q (%s)", raw, id, again, got, reason)
		}
		if n := bytes.TrimSpace(raw); n[0] != '"' && string(n) != "-0" && id != string(n) {
			t.Fatalf("integer userId %s normalised to %q", n, id)
		}
	})
}

// allTwice reports whether every detail refuses a member written twice in
// one object, which valid UTF-8 may hold.
func allTwice(details []herald.Detail) bool {
	for _, d := range details {
		if d.Reason != request.ReasonDuplicateMember {
			return false
		}
	}
	return true
}
