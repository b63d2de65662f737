package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
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
// that every problem is named in the details of the 400.
type object struct {
	prefix  string
	members map[string]json.RawMessage
	details *[]herald.Detail
}

// parseObject decodes body as one JSON object.
func parseObject(body []byte) (object, *[]herald.Detail) {
	details := &[]herald.Detail{}
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&m); err != nil || m == nil {
		*details = append(*details, herald.Detail{Field: "body", Reason: "must be a JSON object"})
		return object{details: details}, details
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		*details = append(*details, herald.Detail{Field: "body", Reason: "must hold a single JSON object"})
	}
	return object{members: m, details: details}, details
}

func (o object) field(name string) string { return o.prefix + name }

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

func (o object) raw(name string) (json.RawMessage, bool) {
	v, ok := o.members[name]
	return v, ok
}

// boolean reads an optional boolean member; nil when absent or invalid.
func (o object) boolean(name string) *bool {
	v, ok := o.members[name]
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
	v, ok := o.members[name]
	if !ok {
		if required {
			o.fail(name, "is required")
		}
		return "", false
	}
	var s string
	if bytes.TrimSpace(v)[0] != '"' || json.Unmarshal(v, &s) != nil {
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

// userID reads a required userId given as a string or an integer.
func (o object) userID(name string) (string, bool) {
	id, reason := herald.ParseUserID(o.members[name])
	if reason != "" {
		o.fail(name, reason)
		return "", false
	}
	return id, true
}

// child reads a nested object member; ok is false when it is absent or not
// an object (the latter is recorded as a problem).
func (o object) child(name string, required bool) (object, bool) {
	v, ok := o.members[name]
	if !ok {
		if required {
			o.fail(name, "is required")
		}
		return object{}, false
	}
	var m map[string]json.RawMessage
	if bytes.TrimSpace(v)[0] != '{' || json.Unmarshal(v, &m) != nil {
		o.fail(name, "must be an object")
		return object{}, false
	}
	return object{prefix: o.field(name) + ".", members: m, details: o.details}, true
}

// invalid returns the 400 for the recorded problems, or nil when none.
func invalid(details *[]herald.Detail) error {
	if len(*details) == 0 {
		return nil
	}
	return herald.Invalid(*details...)
}
