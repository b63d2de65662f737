package client

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// Error is a non-2xx answer from Herald, decoded from the API's error body
// {statusCode, path, code, message, details?}. When the body is not that
// JSON, StatusCode is still the HTTP status, Path the request path and
// Message the start of the body (or the status text). Use errors.As to
// reach it and compare Code with the spec's ERR-AB-… codes.
type Error struct {
	StatusCode int      `json:"statusCode"`
	Path       string   `json:"path"`
	Code       string   `json:"code"`
	Message    string   `json:"message"`
	Details    []Detail `json:"details,omitempty"`
	// RetryAfter is the Retry-After header of a 429 or 503 answer, 0 if absent.
	RetryAfter time.Duration `json:"-"`
}

// Detail names one invalid field of an ERR-AB-VAL-00 answer.
type Detail struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// Error formats the status, code, message and details.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("herald: ")
	b.WriteString(strconv.Itoa(e.StatusCode))
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	for i, d := range e.Details {
		sep := "; "
		if i == 0 {
			sep = " ("
		}
		b.WriteString(sep + d.Field + ": " + d.Reason)
	}
	if len(e.Details) > 0 {
		b.WriteString(")")
	}
	return b.String()
}

// decodeError turns a non-2xx answer into *Error.
func decodeError(resp *http.Response) *Error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &Error{}
	if err := json.Unmarshal(raw, e); err != nil {
		e = &Error{Message: nonJSONMessage(raw, resp.StatusCode)}
	}
	if e.StatusCode == 0 {
		e.StatusCode = resp.StatusCode
	}
	if e.Path == "" && resp.Request != nil {
		e.Path = resp.Request.URL.Path
	}
	e.RetryAfter = retryAfter(resp.Header.Get("Retry-After"))
	return e
}

// nonJSONMessage keeps the start of a non-JSON body, e.g. a proxy's page.
func nonJSONMessage(raw []byte, status int) string {
	const limit = 200
	msg := strings.TrimSpace(string(raw))
	if msg == "" {
		return http.StatusText(status)
	}
	if len(msg) > limit {
		msg = strings.ToValidUTF8(msg[:limit], "") + "…"
	}
	return msg
}

// retryAfter reads a Retry-After header given in seconds.
func retryAfter(v string) time.Duration {
	secs, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || secs < 0 {
		return 0
	}
	return time.Duration(secs) * time.Second
}
