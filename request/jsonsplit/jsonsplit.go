// Package jsonsplit splits JSON that is already known to be valid (checked
// once, with json.Valid) into its parts without scanning it again: an
// object into its members, an array into its elements, each value as it
// was sent, and a string value into its text. It is what json.Unmarshal
// into a map or a slice of json.RawMessage gives, without its second pass
// over the text; the API's request bodies and the FCM emulator's send
// bodies are read with it.
//
// It lives beside package request, its main user (request's Object reads
// every body through it), rather than under internal/, which holds test
// harnesses only; it is a package of its own, not part of request, so that
// the FCM emulator and api's event reader use it without the rest of
// request's reading.
package jsonsplit

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Object calls member for each member of raw in the order they were sent
// (a name sent twice, twice), each value as it was sent; it reports false,
// calling nothing, when raw is no object. raw must be valid JSON.
func Object(raw []byte, member func(name string, value json.RawMessage)) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	if i = skipSpace(raw, i+1); raw[i] == '}' {
		return true
	}
	for {
		end := valueEnd(raw, i)
		name, _ := String(raw[i:end])
		i = skipSpace(raw, skipSpace(raw, end)+1) // past the colon
		end = valueEnd(raw, i)
		member(name, raw[i:end:end])
		if i = skipSpace(raw, end); raw[i] == '}' {
			return true
		}
		i = skipSpace(raw, i+1) // past the comma
	}
}

// Array returns the elements of raw, each as it was sent; ok is false
// when raw is no array. raw must be valid JSON.
func Array(raw []byte) ([]json.RawMessage, bool) {
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

// String decodes the valid JSON value v when it is a string: one without
// escapes, in valid UTF-8, is its bytes between the quotes, taken without
// decoding it again; any other through encoding/json (which replaces
// invalid UTF-8).
func String(v json.RawMessage) (string, bool) {
	t := bytes.TrimSpace(v)
	if len(t) < 2 || t[0] != '"' {
		return "", false
	}
	if inner := t[1 : len(t)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	var s string
	return s, json.Unmarshal(t, &s) == nil
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
