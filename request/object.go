package request

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/request/jsonsplit"
)

// DefaultBodyLimit bounds bodies of endpoints the specification gives no
// limit to.
const DefaultBodyLimit = 1 << 20

// Object is a decoded JSON object whose members are checked one by one, so
// that every problem is named in the details of the 400. It records the
// members it was asked for: Check then names the others (DESIGN section 4,
// item 8).
type Object struct {
	prefix string
	// members are the object's members in the order they were sent,
	// each marked when read; nil when the body was no object. A slice,
	// not maps: the 200 objects of a /messages body are read at every
	// accept, and a handful of members is looked up faster by name in
	// it than a map is made.
	members []member
	details *[]herald.Detail
	// all lists every object of the body, for Check; nil when unknown
	// members are ignored (the SDK API: apps in the field outlive server
	// versions).
	all *objects
}

// member is one member of an Object: its name, its value as it was sent,
// and whether a reader asked for it or DropNulls removed it.
type member struct {
	name          string
	value         json.RawMessage
	read, dropped bool
}

// find returns the index of the member name, or -1. Of a name sent twice
// (refused by TextProblems before any reading) it finds the last, as
// json.Unmarshal would keep it.
func (o Object) find(name string) int {
	for i := len(o.members) - 1; i >= 0; i-- {
		if m := &o.members[i]; m.name == name && !m.dropped {
			return i
		}
	}
	return -1
}

// objects are the objects of a body, in the order they were read, and
// each one's index by prefix.
type objects struct {
	list []Object
	at   map[string]int
}

// Parse decodes body as one JSON object whose unknown members are
// refused (the Server API).
func Parse(body []byte) (Object, *[]herald.Detail) {
	o, details := ParseLenient(body)
	if o.members != nil {
		o.all = &objects{list: []Object{o}, at: map[string]int{"": 0}}
	}
	return o, details
}

// ParseLenient decodes body as one JSON object whose unknown members are
// ignored (the SDK API). Strings holding invalid UTF-8 or a lone surrogate
// escape are refused before anything is read, so that no value is ever
// read with U+FFFD in it.
func ParseLenient(body []byte) (Object, *[]herald.Detail) {
	details := &[]herald.Detail{}
	if d := TextProblems(body); len(d) > 0 {
		*details = d
		return Object{details: details}, details
	}
	var m []member
	ok := json.Valid(body)
	if ok {
		m, ok = splitObject(body)
	}
	if !ok {
		*details = append(*details, herald.Detail{Field: "body", Reason: NotObjectReason(body)})
		return Object{details: details}, details
	}
	return Object{members: m, details: details}, details
}

// nested makes the object m found at field, read under the same rules as o.
func (o Object) nested(field string, m []member) Object {
	prefix := field + "."
	if o.all != nil {
		if i, ok := o.all.at[prefix]; ok {
			return o.all.list[i] // read twice: one record of what was read
		}
	}
	n := Object{prefix: prefix, members: m, details: o.details, all: o.all}
	if o.all != nil {
		o.all.at[prefix] = len(o.all.list)
		o.all.list = append(o.all.list, n)
	}
	return n
}

// Element reads the array element raw at field as an object; ok is false
// when it is not one (recorded as a problem).
func (o Object) Element(field string, raw json.RawMessage) (Object, bool) {
	m, ok := splitObject(raw)
	if !ok {
		o.Fail(field, "must be an object")
		return Object{}, false
	}
	return o.nested(o.field(field), m), true
}

// Check names every member of the body that no reader asked for, then
// returns the 400 for all recorded problems, or nil when there are none.
func (o Object) Check() error {
	if o.all != nil {
		for _, n := range o.all.list {
			var unknown []string
			for _, m := range n.members {
				if !m.read && !m.dropped {
					unknown = append(unknown, m.name)
				}
			}
			slices.Sort(unknown)
			for _, name := range unknown {
				n.Fail(name, "unknown field")
			}
		}
	}
	return Invalid(o.details)
}

// field is the path of a member in the details; an empty name shows as "".
func (o Object) field(name string) string {
	if name == "" {
		name = `""`
	}
	return o.prefix + name
}

// Fail records that the member name was refused for reason; on a body
// that was no object it records nothing (that problem is named already).
func (o Object) Fail(name, reason string) {
	if o.members == nil {
		return // the body was no object; that problem is already named
	}
	*o.details = append(*o.details, herald.Detail{Field: o.field(name), Reason: reason})
}

// DropNulls removes the named members when they are JSON null: on the push
// endpoints a null optional member means the same as an absent one.
func (o Object) DropNulls(names ...string) {
	for _, n := range names {
		if i := o.find(n); i >= 0 && string(bytes.TrimSpace(o.members[i].value)) == "null" {
			o.members[i].dropped = true
		}
	}
}

// Raw returns a member as it was sent and records that it was read.
func (o Object) Raw(name string) (json.RawMessage, bool) {
	i := o.find(name)
	if i < 0 {
		return nil, false
	}
	o.members[i].read = true
	return o.members[i].value, true
}

// Boolean reads an optional boolean member; nil when absent or invalid.
func (o Object) Boolean(name string) *bool {
	v, ok := o.Raw(name)
	if !ok {
		return nil
	}
	var b bool
	if s := string(bytes.TrimSpace(v)); s == "true" || s == "false" {
		b = s == "true"
		return &b
	}
	o.Fail(name, "must be a boolean")
	return nil
}

// Str reads a string member. A required one must be present and non-empty;
// maxLen, when positive, bounds its length in Unicode code points.
func (o Object) Str(name string, required bool, maxLen int) (string, bool) {
	v, ok := o.Raw(name)
	if !ok {
		if required {
			o.Fail(name, "is required")
		}
		return "", false
	}
	s, ok := jsonsplit.String(v)
	if !ok {
		o.Fail(name, "must be a string")
		return "", false
	}
	if required && strings.TrimSpace(s) == "" {
		o.Fail(name, "must not be empty")
		return "", false
	}
	if maxLen > 0 && utf8.RuneCountInString(s) > maxLen {
		o.Fail(name, fmt.Sprintf("must be at most %d characters", maxLen))
		return "", false
	}
	return s, true
}

// UserID reads a required userId given as a string or an integer.
func (o Object) UserID(name string) (string, bool) {
	raw, _ := o.Raw(name)
	id, reason := ParseUserID(raw)
	if reason != "" {
		o.Fail(name, reason)
		return "", false
	}
	return id, true
}

// Child reads a nested object member; ok is false when it is absent or not
// an object (the latter is recorded as a problem).
func (o Object) Child(name string, required bool) (Object, bool) {
	v, ok := o.Raw(name)
	if !ok {
		if required {
			o.Fail(name, "is required")
		}
		return Object{}, false
	}
	m, ok := splitObject(v)
	if !ok {
		o.Fail(name, "must be an object")
		return Object{}, false
	}
	return o.nested(o.field(name), m), true
}

// Array reads a required array member with between 1 and max elements.
func (o Object) Array(name string, max int) []json.RawMessage {
	raw, ok := o.Raw(name)
	if !ok {
		o.Fail(name, "is required")
		return nil
	}
	items, ok := jsonsplit.Array(raw)
	if !ok {
		o.Fail(name, "must be an array")
		return nil
	}
	if len(items) == 0 || len(items) > max {
		o.Fail(name, fmt.Sprintf("must have 1 to %d elements", max))
		return nil
	}
	return items
}

// Invalid returns the 400 for the recorded problems, or nil when none.
func Invalid(details *[]herald.Detail) error {
	if len(*details) == 0 {
		return nil
	}
	return herald.Invalid(*details...)
}

// splitObject returns the members of raw in the order they were sent,
// each value as it was sent (jsonsplit.Object); ok is false when raw is no
// object. raw must be valid JSON (json.Valid), as a body's parts are once
// the body was checked.
func splitObject(raw []byte) ([]member, bool) {
	m := make([]member, 0, 4)
	ok := jsonsplit.Object(raw, func(name string, value json.RawMessage) {
		m = append(m, member{name: name, value: value})
	})
	return m, ok
}
