package admin

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/request"
)

// maxBody bounds an admin JSON body.
const maxBody = 1 << 20

// decode reads a JSON body of at most 1 MiB into v (see decodeBody).
func decode(r *http.Request, v any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	return decodeBody(body, v)
}

// readBody reads a body of at most 1 MiB.
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		return nil, herald.Invalid(herald.Detail{Field: "body", Reason: fmt.Sprintf("must be at most %d bytes", maxBody)})
	}
	return body, nil
}

// decodeBody reads body into v, a pointer to a struct with json tags. A
// string holding invalid UTF-8 or a lone surrogate escape, a member of the
// wrong type and a member v has no field for are refused (DESIGN section 4,
// item 8): a typo must never pass for a setting left alone.
func decodeBody(body []byte, v any) error {
	if d := request.TextProblems(body); len(d) > 0 {
		return herald.Invalid(d...)
	}
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return herald.Invalid(herald.Detail{Field: te.Field, Reason: "must be " + jsonKind(te.Type)})
		}
		return herald.Invalid(herald.Detail{Field: "body", Reason: request.NotObjectReason(body)})
	}
	if d := unknownMembers(body, reflect.TypeOf(v), ""); len(d) > 0 {
		return herald.Invalid(d...)
	}
	return nil
}

// jsonKind names the JSON type a Go type decodes from, so a reason never
// shows a Go type name.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// unknownMembers names, by their path under prefix, the members of the JSON
// value raw that t has no field for, at any depth. Members are matched to
// json tags exactly: encoding/json would also take "Name" for "name".
func unknownMembers(raw []byte, t reflect.Type, prefix string) []herald.Detail {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if pt := reflect.PointerTo(t); pt.Implements(jsonUnmarshaler) || pt.Implements(textUnmarshaler) {
		return nil // a type that reads itself
	}
	var out []herald.Detail
	switch t.Kind() {
	case reflect.Struct:
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return nil // null, or a type problem already named
		}
		fields := jsonFields(t)
		for _, name := range slices.Sorted(maps.Keys(m)) {
			path := memberPath(prefix, name)
			f, ok := fields[name]
			if !ok {
				out = append(out, herald.Detail{Field: path, Reason: "unknown field"})
				continue
			}
			out = append(out, unknownMembers(m[name], f, path)...)
		}
	case reflect.Slice, reflect.Array:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		for i, item := range items {
			out = append(out, unknownMembers(item, t.Elem(), fmt.Sprintf("%s[%d]", prefix, i))...)
		}
	}
	return out
}

// jsonFields maps the member names a struct reads to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
			continue
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			maps.Copy(out, jsonFields(f.Type))
			continue
		case name == "":
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// memberPath joins a member name to its parent's path; an empty name shows
// as "".
func memberPath(prefix, name string) string {
	if name == "" {
		name = `""`
	}
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}
