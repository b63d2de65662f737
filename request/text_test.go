package request_test

import (
	"slices"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/request"
)

func TestTextProblems(t *testing.T) {
	t.Parallel()
	const (
		bad  = herald.ReasonInvalidUTF8
		lone = request.ReasonLoneSurrogate
	)
	tests := []struct {
		name string
		body string
		want []herald.Detail
	}{
		{"ASCII", `{"userId":"u1","title":"hi"}`, nil},
		{"Korean", `{"title":"(광고) 안녕"}`, nil},
		{"SurrogatePair", `{"title":"\ud83d\ude00"}`, nil},
		{"SurrogatePairUpper", `{"title":"\uD83D\uDE00"}`, nil},
		{"EscapedBackslashThenU", `{"title":"\\ud800"}`, nil},
		{"ReplacementCharSent", `{"title":"\ufffd �"}`, nil},
		{"NotJSON", "userId=u1", nil},
		{"ErrInvalidByte", "{\"userId\":\"a\xffb\"}", []herald.Detail{{Field: "userId", Reason: bad}}},
		{"ErrTruncatedRune", "{\"title\":\"\xe4\xb8\"}", []herald.Detail{{Field: "title", Reason: bad}}},
		{"ErrEncodedSurrogate", "{\"title\":\"\xed\xa0\x80\"}", []herald.Detail{{Field: "title", Reason: bad}}},
		{"ErrOverlong", "{\"title\":\"\xc0\xaf\"}", []herald.Detail{{Field: "title", Reason: bad}}},
		{"ErrLoneHigh", `{"userId":"\ud800"}`, []herald.Detail{{Field: "userId", Reason: lone}}},
		{"ErrLoneLow", `{"userId":"\udc00"}`, []herald.Detail{{Field: "userId", Reason: lone}}},
		{"ErrHighThenText", `{"userId":"\ud83dx"}`, []herald.Detail{{Field: "userId", Reason: lone}}},
		{"ErrHighThenHigh", `{"userId":"\ud83d\ud83d"}`, []herald.Detail{{Field: "userId", Reason: lone}}},
		{"ErrHighAtEnd", `{"userId":"a\uDBFF"}`, []herald.Detail{{Field: "userId", Reason: lone}}},
		{"ErrLowThenHigh", `{"userId":"\ude00\ud83d"}`, []herald.Detail{{Field: "userId", Reason: lone}}},
		{"ErrInArray", `{"userIds":["a","b","\ud800"]}`, []herald.Detail{{Field: "userIds[2]", Reason: lone}}},
		{"SameNameInTwoObjects", `{"options":{"isUsingBadge":true},"messages":[{"userId":"a"},{"userId":"b"}]}`, nil},
		{"SameNamesAfterDeeperObjects", `{"a":{"x":{"y":1}},"b":[{"x":1,"y":{"x":2}},{"y":1,"x":{"y":2}}]}`, nil},
		{"ErrDuplicateInLaterSibling", `{"messages":[{"userId":"a","title":"t","content":"c"},{"title":"x","title":"y"}]}`,
			[]herald.Detail{{Field: "messages[1].title", Reason: request.ReasonDuplicateMember}}},
		{"ErrDuplicateMember", `{"options":{"scheduleTime":"2030-01-01T00:00"},"options":null}`,
			[]herald.Detail{{Field: "options", Reason: request.ReasonDuplicateMember}}},
		{"ErrDuplicateEscapedName", `{"messages":[{"title":"a","\u0074itle":"b"}]}`,
			[]herald.Detail{{Field: "messages[0].title", Reason: request.ReasonDuplicateMember}}},
		{"ErrInNestedArray", `{"messages":[{"userId":"a","title":"t"},{"title":"x","userId":"\udfff"}]}`,
			[]herald.Detail{{Field: "messages[1].userId", Reason: lone}}},
		{"ErrInOptions", "{\"options\":{\"requestGroupId\":\"g\xfe\"}}", []herald.Detail{{Field: "options.requestGroupId", Reason: bad}}},
		{"ErrMemberName", "{\"options\":{\"a\xff\":1}}", []herald.Detail{{Field: "options", Reason: "member names must be valid UTF-8 without lone surrogate escapes"}}},
		{"ErrTopLevelString", `"\ud800"`, []herald.Detail{{Field: "body", Reason: lone}}},
		{"ErrEvery", "{\"a\":\"\xff\",\"b\":[\"\\udc00\"]}", []herald.Detail{{Field: "a", Reason: bad}, {Field: "b[0]", Reason: lone}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := request.TextProblems([]byte(tt.body)); !slices.Equal(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestTextProblemsBounded: a body full of bad strings gives at most ten
// details, so an answer never grows with the body.
func TestTextProblemsBounded(t *testing.T) {
	t.Parallel()
	body := []byte(`{"userIds":[`)
	for i := range 1000 {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, `"\ud800"`...)
	}
	body = append(body, "]}"...)
	if got := request.TextProblems(body); len(got) != 10 || got[9].Field != "userIds[9]" {
		t.Errorf("got %d details (%+v), want the first 10", len(got), got)
	}
}
