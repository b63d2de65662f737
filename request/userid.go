package request

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/heraldpush/herald"
)

// ParseUserID normalises a userId given as a JSON string or number to its
// text: 123 and "123" are the same user (and -0 is 0). A fraction, an
// exponent, a blank string, control characters, invalid UTF-8 or a lone
// surrogate escape, or any other JSON type is refused with the reason.
func ParseUserID(raw json.RawMessage) (string, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", "is required"
	}
	switch raw[0] {
	case '"':
		s, ok := plainJSONString(raw)
		if !ok && json.Unmarshal(raw, &s) != nil {
			return "", "must be a string or an integer"
		}
		if !validJSONString(raw) {
			return "", herald.ReasonInvalidUTF8 + " without lone surrogate escapes"
		}
		if strings.TrimSpace(s) == "" {
			return "", "must not be empty"
		}
		if strings.IndexFunc(s, unicode.IsControl) >= 0 {
			return "", "must not contain control characters"
		}
		if utf8.RuneCountInString(s) > herald.MaxUserIDLen {
			return "", "must be at most 255 characters"
		}
		return s, ""
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if !isJSONInteger(raw) {
			return "", "must be an integer when given as a number"
		}
		if len(raw) > herald.MaxUserIDLen {
			return "", "must be at most 255 characters"
		}
		if string(raw) == "-0" {
			return "0", ""
		}
		return string(raw), ""
	}
	return "", "must be a string or an integer"
}

// plainJSONString returns the text of the JSON string raw when it has no
// escape: its bytes between the quotes, which json.Unmarshal would give
// for valid UTF-8 (the caller checks that). ok is false for any other raw.
func plainJSONString(raw []byte) (string, bool) {
	b, ok := plainJSONBytes(raw)
	return string(b), ok
}

// plainJSONBytes is plainJSONString without the copy: the bytes between
// the quotes.
func plainJSONBytes(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	for _, c := range raw[1 : len(raw)-1] {
		if c < 0x20 || c == '"' || c == '\\' {
			return nil, false
		}
	}
	return raw[1 : len(raw)-1], true
}

// isJSONInteger reports whether a JSON number has no fraction and no
// exponent.
func isJSONInteger(b []byte) bool {
	if b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 || (b[0] == '0' && len(b) > 1) {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
