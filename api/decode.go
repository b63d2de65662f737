package api

import (
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/heraldpush/herald"
)

// readBody reads the body, refusing another content type than JSON and a
// body over limit bytes before anything is parsed.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, herald.Invalid(herald.Detail{Field: "Content-Type", Reason: "must be application/json"})
		}
	}
	var body []byte
	var err error
	if n := r.ContentLength; n >= 0 && n <= limit {
		// The declared length, read into one slice of that size: a
		// request's body is read whole at every accept, and ReadAll
		// would grow its slice from 512 bytes, copying as it goes. The
		// server reads no byte past the declared length, and a body
		// cut short fails as unreadable.
		body = make([]byte, n)
		_, err = io.ReadFull(r.Body, body)
	} else {
		body, err = io.ReadAll(io.LimitReader(r.Body, limit+1))
	}
	if err != nil {
		return nil, herald.Invalid(herald.Detail{Field: "body", Reason: "could not be read"})
	}
	if int64(len(body)) > limit {
		return nil, herald.Invalid(herald.Detail{Field: "body", Reason: fmt.Sprintf("must be at most %d bytes", limit)})
	}
	return body, nil
}
