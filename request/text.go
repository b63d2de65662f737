package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/heraldpush/herald"
)

// Reasons a JSON string is refused by TextProblems, besides
// herald.ReasonInvalidUTF8. Go's encoding/json would turn invalid UTF-8 and
// a lone surrogate into U+FFFD without a word, so that two different
// userIds become one user and a mangled title reaches FCM.
const (
	ReasonLoneSurrogate = `must not hold a lone surrogate escape (\ud800 to \udfff without its pair)`
	// ReasonDuplicateMember: a member named twice in one object, which Go
	// would read as the last one without a word.
	ReasonDuplicateMember = "must not appear twice in one object"
	reasonMemberNameText  = "member names must be valid UTF-8 without lone surrogate escapes"
)

// maxTextProblems bounds the details one body can produce.
const maxTextProblems = 10

// TextProblems names each string of a JSON text, member names included,
// that holds invalid UTF-8 or a lone surrogate escape, and each member named
// twice in one object: the field is the string's or member's path
// (messages[2].title, userIds[0]), "body" for a top-level string. Only strings are looked at: a text that is no JSON at all is left
// to the parser, which refuses it.
func TextProblems(body []byte) []herald.Detail {
	var (
		stack []frame
		out   []herald.Detail
	)
	for i := 0; i < len(body) && len(out) < maxTextProblems; i++ {
		switch body[i] {
		case '{':
			stack = open(stack, true)
		case '[':
			stack = open(stack, false)
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if n := len(stack); n > 0 {
				stack[n-1].index++
				stack[n-1].expectKey = stack[n-1].object
			}
		case ':':
			if n := len(stack); n > 0 {
				stack[n-1].expectKey = false
			}
		case '"':
			end, reason := scanString(body, i)
			isKey := len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].expectKey
			switch {
			case isKey && reason != "":
				out = append(out, herald.Detail{Field: path(stack[:len(stack)-1]), Reason: reasonMemberNameText})
			case isKey:
				key := memberName(body[i:end])
				top := &stack[len(stack)-1]
				top.key = key
				if slices.ContainsFunc(top.seen, func(k []byte) bool { return bytes.Equal(k, key) }) {
					out = append(out, herald.Detail{Field: path(stack), Reason: ReasonDuplicateMember})
				}
				top.seen = append(top.seen, key)
			case reason != "":
				out = append(out, herald.Detail{Field: path(stack), Reason: reason})
			}
			i = end - 1
		}
	}
	return out
}

// memberName is the text of the member name raw (a string token with its
// quotes): the bytes between the quotes when it has no escape (no copy:
// TextProblems looks at every member name of a body), else decoded; empty
// when it is no JSON string (the parser refuses that text).
func memberName(raw []byte) []byte {
	if s, ok := plainJSONBytes(raw); ok {
		return s
	}
	var key string
	json.Unmarshal(raw, &key)
	return []byte(key)
}

// validJSONString reports whether raw, one JSON string token with its
// quotes, holds only valid UTF-8 and no lone surrogate escape.
func validJSONString(raw []byte) bool {
	if len(raw) < 2 || raw[0] != '"' {
		return false
	}
	end, reason := scanString(raw, 0)
	return reason == "" && end == len(raw)
}

// frame is one open object or array while TextProblems walks a text.
type frame struct {
	object    bool
	expectKey bool
	key       []byte
	index     int
	seen      [][]byte // member names met so far in this object
}

// open adds the frame of an object or an array to stack. The frame takes
// over the member names' list of the last frame closed at its depth, so
// that an array of many objects allocates one list, not one for each.
func open(stack []frame, object bool) []frame {
	n := len(stack)
	if n == cap(stack) {
		return append(stack, frame{object: object, expectKey: object})
	}
	stack = stack[:n+1]
	stack[n] = frame{object: object, expectKey: object, seen: stack[n].seen[:0]}
	return stack
}

// path is the JSON path of the value the innermost frame is at.
func path(stack []frame) string {
	p := ""
	for _, f := range stack {
		key := string(f.key)
		if key == "" {
			key = `""`
		}
		switch {
		case f.object && p == "":
			p = key
		case f.object:
			p += "." + key
		default:
			p += "[" + strconv.Itoa(f.index) + "]"
		}
	}
	if p == "" {
		return "body"
	}
	return p
}

// scanString reads the string starting at the quote body[start] and returns
// the index just past its closing quote (len(body) when it has none) and
// the first problem of its text, or "".
func scanString(body []byte, start int) (end int, reason string) {
	for j := start + 1; j < len(body); {
		c := body[j]
		switch {
		case c == '"':
			return j + 1, reason
		case c == '\\' && j+1 < len(body) && body[j+1] == 'u':
			n, ok := surrogateEscape(body[j:])
			if !ok && reason == "" {
				reason = ReasonLoneSurrogate
			}
			j += n
		case c == '\\':
			j += 2
		case c < utf8.RuneSelf:
			j++
		default:
			r, size := utf8.DecodeRune(body[j:])
			if r == utf8.RuneError && size == 1 && reason == "" {
				reason = herald.ReasonInvalidUTF8
			}
			j += size
		}
	}
	return len(body), reason
}

// surrogateEscape reads the \uXXXX escape at the start of b and returns how
// many bytes it spans (12 for a surrogate pair) and whether it is allowed: a
// high surrogate must be followed at once by a low one, and a low one never
// stands alone. A malformed escape is left to the parser.
func surrogateEscape(b []byte) (int, bool) {
	u, ok := hex4(b)
	switch {
	case !ok:
		return 2, true
	case u >= 0xDC00 && u <= 0xDFFF:
		return 6, false
	case u < 0xD800 || u > 0xDBFF:
		return 6, true
	}
	if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
		if lo, ok := hex4(b[6:]); ok && lo >= 0xDC00 && lo <= 0xDFFF {
			return 12, true
		}
	}
	return 6, false
}

// hex4 reads the four hex digits of the escape \uXXXX at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 6 {
		return 0, false
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// NotObjectReason says why body, which did not decode as one JSON object,
// was refused: empty, not valid JSON at all (a trailing comma, say: the
// parser's complaint and the 1-based offset of the byte it stopped at), or
// valid JSON of another kind.
func NotObjectReason(body []byte) string {
	var v any
	err := json.Unmarshal(body, &v)
	var se *json.SyntaxError
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		return "must be a JSON object; the body is empty"
	case errors.As(err, &se):
		return fmt.Sprintf("is not valid JSON: %s at byte %d", se.Error(), se.Offset)
	}
	return "must be a JSON object"
}
