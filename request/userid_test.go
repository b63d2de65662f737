package request_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/request"
)

func TestParseUserID(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("가", herald.MaxUserIDLen)
	tests := []struct {
		name       string
		raw        string
		want       string
		wantReason bool
	}{
		{"String", `"user-1"`, "user-1", false},
		{"Number", `123`, "123", false},
		{"NumericString", `"123"`, "123", false},
		{"Zero", `0`, "0", false},
		{"Negative", `-7`, "-7", false},
		{"BigIntegerKeptExactly", `12345678901234567890123`, "12345678901234567890123", false},
		{"SpacesAround", " 42 ", "42", false},
		{"UnicodeAtLimit", `"` + long + `"`, long, false},
		{"NegativeZeroIsZero", `-0`, "0", false},
		{"ErrBlank", `"   "`, "", true},
		{"ErrControl", `"a\u0001b"`, "", true},
		{"ErrNewline", `"a\nb"`, "", true},
		{"ErrFraction", `1.5`, "", true},
		{"ErrExponent", `1e3`, "", true},
		{"ErrFractionZero", `1.0`, "", true},
		{"ErrEmptyString", `""`, "", true},
		{"ErrNull", `null`, "", true},
		{"ErrAbsent", ``, "", true},
		{"ErrBool", `true`, "", true},
		{"ErrObject", `{"id":1}`, "", true},
		{"ErrArray", `[1]`, "", true},
		{"ErrTooLong", `"` + long + `x"`, "", true},
		{"ErrTooLongNumber", strings.Repeat("9", herald.MaxUserIDLen+1), "", true},
		{"SurrogatePair", `"\ud83d\ude00"`, "\U0001F600", false},
		{"ErrInvalidUTF8", "\"a\xffb\"", "", true},
		{"ErrLoneHighSurrogate", `"\ud800"`, "", true},
		{"ErrLoneLowSurrogate", `"a\udc00"`, "", true},
		{"ErrHighSurrogateThenText", `"\ud83dx"`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, reason := request.ParseUserID(json.RawMessage(tt.raw))
			if tt.wantReason {
				if reason == "" || got != "" {
					t.Errorf("got (%q, %q), want (\"\", a reason)", got, reason)
				}
				return
			}
			if got != tt.want || reason != "" {
				t.Errorf("got (%q, %q), want (%q, \"\")", got, reason, tt.want)
			}
		})
	}
}

func TestParseUserIDNumberAndStringAreOneUser(t *testing.T) {
	t.Parallel()
	n, _ := request.ParseUserID(json.RawMessage(`123`))
	s, _ := request.ParseUserID(json.RawMessage(`"123"`))
	if n != s {
		t.Errorf("got %q for 123 and %q for \"123\", want the same", n, s)
	}
}
