package audience

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/heraldpush/herald"
)

// The limits of a user's tags (DESIGN 13).
const (
	// MaxTags is how many tags a user may have.
	MaxTags = 100
	// MaxTagValue is the longest string a tag (or a filter's value) may
	// hold, in characters.
	MaxTagValue = 255
	// maxTagName is the longest tag name, in characters.
	maxTagName = 64
)

// Kind is what a Value holds.
type Kind uint8

// The kinds of a Value; the zero Kind is no value.
const (
	KindString Kind = iota + 1
	KindNumber
	KindBool
)

// Value is a tag's value, or a value a filter compares with: a string of
// at most MaxTagValue characters, a finite number or a boolean. Only the
// member its Kind names is meaningful; values of different kinds are never
// equal ("5" is not 5).
type Value struct {
	Kind Kind
	Str  string
	Num  float64
	Bool bool
}

// String returns the string value s.
func String(s string) Value { return Value{Kind: KindString, Str: s} }

// Number returns the number value n (finite).
func Number(n float64) Value { return Value{Kind: KindNumber, Num: n} }

// Bool returns the boolean value b.
func Bool(b bool) Value { return Value{Kind: KindBool, Bool: b} }

// Tags are a user's tags by name.
type Tags map[string]Value

// Text returns the named tag's value as a template renders it
// (Value.Text), and whether the tags hold it: the lookup of package
// render's templates. Nil tags hold none.
func (t Tags) Text(name string) (string, bool) {
	v, ok := t[name]
	if !ok {
		return "", false
	}
	return v.Text(), true
}

// Equal reports whether v and w are the same value of the same kind.
func (v Value) Equal(w Value) bool {
	if v.Kind != w.Kind {
		return false
	}
	switch v.Kind {
	case KindString:
		return v.Str == w.Str
	case KindNumber:
		return v.Num == w.Num
	case KindBool:
		return v.Bool == w.Bool
	}
	return true
}

// Text is the value as a store keeps it in text and a template renders
// it: the string itself, a number as JSON writes it, true or false.
func (v Value) Text() string {
	switch v.Kind {
	case KindString:
		return v.Str
	case KindNumber:
		return FormatNumber(v.Num)
	case KindBool:
		return strconv.FormatBool(v.Bool)
	}
	return ""
}

// MarshalJSON writes the value as a JSON string, number or boolean.
func (v Value) MarshalJSON() ([]byte, error) {
	switch v.Kind {
	case KindString:
		return json.Marshal(v.Str)
	case KindNumber:
		if math.IsNaN(v.Num) || math.IsInf(v.Num, 0) {
			return nil, errors.New("audience: a number value must be finite")
		}
		return json.Marshal(v.Num)
	case KindBool:
		return json.Marshal(v.Bool)
	}
	return nil, errors.New("audience: a value without a kind")
}

// UnmarshalJSON reads a JSON string, number or boolean within the limits
// of a tag's value.
func (v *Value) UnmarshalJSON(raw []byte) error {
	got, reason := parseValue(raw)
	if reason != "" {
		return errors.New("audience: value " + reason)
	}
	*v = got
	return nil
}

// reasonValue is why a value that is not a tag's value is refused.
const reasonValue = "must be a string, a number or a boolean"

// parseValue reads a value; a non-empty reason says why it was refused.
func parseValue(raw []byte) (Value, string) {
	raw = bytes.TrimSpace(raw)
	if !utf8.Valid(raw) {
		return Value{}, herald.ReasonInvalidUTF8
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil || dec.More() {
		return Value{}, reasonValue
	}
	switch x := x.(type) {
	case string:
		if reason := stringReason(x); reason != "" {
			return Value{}, reason
		}
		return String(x), ""
	case json.Number:
		n, err := strconv.ParseFloat(string(x), 64)
		if err != nil || math.IsInf(n, 0) {
			return Value{}, "must be a finite number"
		}
		return Number(n), ""
	case bool:
		return Bool(x), ""
	}
	return Value{}, reasonValue
}

// stringReason says why s cannot be a value's string, "" when it can.
// NUL is refused because PostgreSQL's text cannot hold it.
func stringReason(s string) string {
	if utf8.RuneCountInString(s) > MaxTagValue {
		return "must be at most " + strconv.Itoa(MaxTagValue) + " characters"
	}
	if strings.ContainsRune(s, 0) {
		return "must not contain the character U+0000"
	}
	return ""
}

// ValueOf reads a value of kind from text as a person types it: a string
// as it is, a number as Go's strconv reads it, a boolean as true or false.
// A non-empty reason says why text is not such a value.
func ValueOf(kind Kind, text string) (Value, string) {
	switch kind {
	case KindString:
		if reason := stringReason(text); reason != "" {
			return Value{}, reason
		}
		if !utf8.ValidString(text) {
			return Value{}, herald.ReasonInvalidUTF8
		}
		return String(text), ""
	case KindNumber:
		n, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return Value{}, "must be a finite number"
		}
		return Number(n), ""
	case KindBool:
		switch strings.TrimSpace(text) {
		case "true":
			return Bool(true), ""
		case "false":
			return Bool(false), ""
		}
		return Value{}, "must be true or false"
	}
	return Value{}, reasonValue
}

// ValidTagName reports whether name may name a tag: 1 to 64 characters of
// a-z, A-Z, 0-9, "_", "." and "-".
func ValidTagName(name string) bool {
	if name == "" || len(name) > maxTagName {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// ReasonTagName is why a tag name is refused.
const ReasonTagName = "must be a tag name: 1 to 64 characters of a-z, A-Z, 0-9, _, . and -"

// ParseTagUpdate reads the tags member of a tag update, at path: an
// object of tag names to a value, or to null to delete the tag (nil in
// the map). Members not named are the store's to keep. Each refused
// member gives a detail naming path.NAME (path itself when raw is not an
// object), in order of name. How many tags the user ends with is for the
// caller to check against MaxTags; an update naming more than that is
// refused here.
func ParseTagUpdate(raw json.RawMessage, path string) (map[string]*Value, []herald.Detail) {
	var members map[string]json.RawMessage
	if !utf8.Valid(raw) {
		return nil, []herald.Detail{{Field: path, Reason: herald.ReasonInvalidUTF8}}
	}
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return nil, []herald.Detail{{Field: path, Reason: "must be an object of tag names to a string, a number, a boolean or null"}}
	}
	if len(members) > MaxTags {
		return nil, []herald.Detail{{Field: path, Reason: "must name at most " + strconv.Itoa(MaxTags) + " tags"}}
	}
	names := make([]string, 0, len(members))
	for name := range members {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make(map[string]*Value, len(members))
	var details []herald.Detail
	for _, name := range names {
		field := path + "." + name
		if !ValidTagName(name) {
			details = append(details, herald.Detail{Field: field, Reason: ReasonTagName})
			continue
		}
		raw := bytes.TrimSpace(members[name])
		if string(raw) == "null" {
			out[name] = nil
			continue
		}
		v, reason := parseValue(raw)
		if reason != "" {
			details = append(details, herald.Detail{Field: field, Reason: reason})
			continue
		}
		out[name] = &v
	}
	if details != nil {
		return nil, details
	}
	return out, nil
}

// FormatNumber writes f as encoding/json writes a float64, so a number tag
// renders as the JSON it was set with (without encoding/json's
// reflection: a template may render one per message): 3, 2.5, 1e+21, 1e-7. NaN and the
// infinities, which JSON cannot hold, are written as strconv does.
func FormatNumber(f float64) string {
	abs := math.Abs(f)
	if math.IsNaN(f) || math.IsInf(f, 0) || abs == 0 || 1e-6 <= abs && abs < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	// encoding/json cleans e-07 to e-7, as ES6 writes exponents.
	if n := len(s); n >= 4 && s[n-4] == 'e' && s[n-3] == '-' && s[n-2] == '0' {
		s = s[:n-2] + s[n-1:]
	}
	return s
}
