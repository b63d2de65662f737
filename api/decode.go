package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/heraldpush/herald"
)

// defaultBodyLimit bounds bodies of endpoints the specification gives no
// limit to.
const defaultBodyLimit = 1 << 20

// readBody reads the body, refusing another content type than JSON and a
// body over limit bytes before anything is parsed.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, herald.Invalid(herald.Detail{Field: "Content-Type", Reason: "must be application/json"})
		}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, herald.Invalid(herald.Detail{Field: "body", Reason: "could not be read"})
	}
	if int64(len(body)) > limit {
		return nil, herald.Invalid(herald.Detail{Field: "body", Reason: fmt.Sprintf("must be at most %d bytes", limit)})
	}
	return body, nil
}

// object is a decoded JSON object whose members are checked one by one, so
// that every problem is named in the details of the 400. It records the
// members it was asked for: check then names the others (DESIGN section 4,
// item 8).
type object struct {
	prefix  string
	members map[string]json.RawMessage
	read    map[string]bool
	details *[]herald.Detail
	// all lists every object of the body, for check; nil when unknown
	// members are ignored (the SDK API: apps in the field outlive server
	// versions).
	all *objects
}

// objects are the objects of a body, in the order they were read, and
// each one's index by prefix.
type objects struct {
	list []object
	at   map[string]int
}

// parseObject decodes body as one JSON object whose unknown members are
// refused (the Server API).
func parseObject(body []byte) (object, *[]herald.Detail) {
	o, details := parseLenient(body)
	if o.members != nil {
		o.all = &objects{list: []object{o}, at: map[string]int{"": 0}}
	}
	return o, details
}

// parseLenient decodes body as one JSON object whose unknown members are
// ignored (the SDK API). Strings holding invalid UTF-8 or a lone surrogate
// escape are refused before anything is read, so that no value is ever
// read with U+FFFD in it.
func parseLenient(body []byte) (object, *[]herald.Detail) {
	details := &[]herald.Detail{}
	if d := herald.TextProblems(body); len(d) > 0 {
		*details = d
		return object{details: details}, details
	}
	var m map[string]json.RawMessage
	ok := json.Valid(body)
	if ok {
		m, ok = splitObject(body)
	}
	if !ok {
		*details = append(*details, herald.Detail{Field: "body", Reason: herald.NotObjectReason(body)})
		return object{details: details}, details
	}
	return object{members: m, read: map[string]bool{}, details: details}, details
}

// nested makes the object m found at field, read under the same rules as o.
func (o object) nested(field string, m map[string]json.RawMessage) object {
	prefix := field + "."
	if o.all != nil {
		if i, ok := o.all.at[prefix]; ok {
			return o.all.list[i] // read twice: one record of what was read
		}
	}
	n := object{prefix: prefix, members: m, read: map[string]bool{}, details: o.details, all: o.all}
	if o.all != nil {
		o.all.at[prefix] = len(o.all.list)
		o.all.list = append(o.all.list, n)
	}
	return n
}

// element reads the array element raw at field as an object; ok is false
// when it is not one (recorded as a problem).
func (o object) element(field string, raw json.RawMessage) (object, bool) {
	m, ok := splitObject(raw)
	if !ok {
		o.fail(field, "must be an object")
		return object{}, false
	}
	return o.nested(o.field(field), m), true
}

// check names every member of the body that no reader asked for, then
// returns the 400 for all recorded problems, or nil when there are none.
func (o object) check() error {
	if o.all != nil {
		for _, n := range o.all.list {
			for _, name := range slices.Sorted(maps.Keys(n.members)) {
				if !n.read[name] {
					n.fail(name, "unknown field")
				}
			}
		}
	}
	return invalid(o.details)
}

// field is the path of a member in the details; an empty name shows as "".
func (o object) field(name string) string {
	if name == "" {
		name = `""`
	}
	return o.prefix + name
}

func (o object) fail(name, reason string) {
	if o.members == nil {
		return // the body was no object; that problem is already named
	}
	*o.details = append(*o.details, herald.Detail{Field: o.field(name), Reason: reason})
}

// dropNulls removes the named members when they are JSON null: on the push
// endpoints a null optional member means the same as an absent one.
func (o object) dropNulls(names ...string) {
	for _, n := range names {
		if v, ok := o.members[n]; ok && string(bytes.TrimSpace(v)) == "null" {
			delete(o.members, n)
		}
	}
}

// raw returns a member as it was sent and records that it was read.
func (o object) raw(name string) (json.RawMessage, bool) {
	v, ok := o.members[name]
	if o.read != nil {
		o.read[name] = true
	}
	return v, ok
}

// boolean reads an optional boolean member; nil when absent or invalid.
func (o object) boolean(name string) *bool {
	v, ok := o.raw(name)
	if !ok {
		return nil
	}
	var b bool
	if s := string(bytes.TrimSpace(v)); s == "true" || s == "false" {
		b = s == "true"
		return &b
	}
	o.fail(name, "must be a boolean")
	return nil
}

// str reads a string member. A required one must be present and non-empty;
// maxLen, when positive, bounds its length in Unicode code points.
func (o object) str(name string, required bool, maxLen int) (string, bool) {
	v, ok := o.raw(name)
	if !ok {
		if required {
			o.fail(name, "is required")
		}
		return "", false
	}
	s, ok := jsonString(v)
	if !ok {
		o.fail(name, "must be a string")
		return "", false
	}
	if required && strings.TrimSpace(s) == "" {
		o.fail(name, "must not be empty")
		return "", false
	}
	if maxLen > 0 && utf8.RuneCountInString(s) > maxLen {
		o.fail(name, fmt.Sprintf("must be at most %d characters", maxLen))
		return "", false
	}
	return s, true
}

// jsonString decodes the JSON value v, a member of a body already decoded
// (so valid JSON, its text checked by herald.TextProblems), when it is a
// string. One without escapes is its bytes between the quotes, taken
// without decoding it again.
func jsonString(v json.RawMessage) (string, bool) {
	t := bytes.TrimSpace(v)
	if len(t) < 2 || t[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(t, '\\') < 0 {
		return string(t[1 : len(t)-1]), true
	}
	var s string
	return s, json.Unmarshal(t, &s) == nil
}

// userID reads a required userId given as a string or an integer.
func (o object) userID(name string) (string, bool) {
	raw, _ := o.raw(name)
	id, reason := herald.ParseUserID(raw)
	if reason != "" {
		o.fail(name, reason)
		return "", false
	}
	return id, true
}

// child reads a nested object member; ok is false when it is absent or not
// an object (the latter is recorded as a problem).
func (o object) child(name string, required bool) (object, bool) {
	v, ok := o.raw(name)
	if !ok {
		if required {
			o.fail(name, "is required")
		}
		return object{}, false
	}
	m, ok := splitObject(v)
	if !ok {
		o.fail(name, "must be an object")
		return object{}, false
	}
	return o.nested(o.field(name), m), true
}

// invalid returns the 400 for the recorded problems, or nil when none.
func invalid(details *[]herald.Detail) error {
	if len(*details) == 0 {
		return nil
	}
	return herald.Invalid(*details...)
}

// splitObject returns the members of raw, each value as it was sent
// (json.Unmarshal into a map of json.RawMessage, without its second pass
// over the text); ok is false when raw is no object. raw must be valid
// JSON (json.Valid), as a body's parts are once the body was checked.
func splitObject(raw []byte) (map[string]json.RawMessage, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	m := make(map[string]json.RawMessage, 8)
	if i = skipSpace(raw, i+1); raw[i] == '}' {
		return m, true
	}
	for {
		end := valueEnd(raw, i)
		key, _ := jsonString(raw[i:end])
		i = skipSpace(raw, skipSpace(raw, end)+1) // past the colon
		end = valueEnd(raw, i)
		m[key] = raw[i:end:end]
		if i = skipSpace(raw, end); raw[i] == '}' {
			return m, true
		}
		i = skipSpace(raw, i+1) // past the comma
	}
}

// splitArray returns the elements of raw, each as it was sent; ok is false
// when raw is no array. raw must be valid JSON, as for splitObject.
func splitArray(raw []byte) ([]json.RawMessage, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	items := []json.RawMessage{}
	if i = skipSpace(raw, i+1); raw[i] == ']' {
		return items, true
	}
	for {
		end := valueEnd(raw, i)
		items = append(items, raw[i:end:end])
		if i = skipSpace(raw, end); raw[i] == ']' {
			return items, true
		}
		i = skipSpace(raw, i+1) // past the comma
	}
}

// skipSpace returns the index of the first byte at or after i that is no
// JSON white space.
func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the index just past the valid JSON value starting at i.
func valueEnd(raw []byte, i int) int {
	depth := 0
	for ; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			if i = stringEnd(raw, i); depth == 0 {
				return i
			}
			i-- // the loop steps past the closing quote
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth == 0 {
				return i // the end of what holds a number or literal
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return i // the end of a number or literal
		}
	}
	return i
}

// stringEnd returns the index just past the JSON string starting with the
// quote at i.
func stringEnd(raw []byte, i int) int {
	for i++; i < len(raw) && raw[i] != '"'; i++ {
		if raw[i] == '\\' {
			i++
		}
	}
	return i + 1
}
