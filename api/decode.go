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
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, herald.Invalid(herald.Detail{Field: "body", Reason: "could not be read"})
	}
	if int64(len(body)) > limit {
		return nil, herald.Invalid(herald.Detail{Field: "body", Reason: fmt.Sprintf("must be at most %d bytes", limit)})
	}
	return body, nil
}
