// Package web is the HTTP plumbing the public and admin listeners share:
// the error body of the specification, JSON answers, request logs, and
// answers for unknown routes in the same shape.
package web

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/heraldpush/herald"
)

// errorBody is the error shape of spec section 7 (+ details, DESIGN 4).
type errorBody struct {
	StatusCode int             `json:"statusCode"`
	Path       string          `json:"path"`
	Code       string          `json:"code"`
	Message    string          `json:"message"`
	Details    []herald.Detail `json:"details,omitempty"`
}

// Error writes err in the specification's error shape. An error carrying no
// code becomes ERR-AB-SYS-00; it is logged here, once, and never sent. A
// request whose deadline passed is ERR-AB-SYS-01 (the store did not answer
// in time), and every 503 carries Retry-After.
func Error(w http.ResponseWriter, r *http.Request, err error) {
	e := herald.AsError(err)
	switch {
	case e == nil && errors.Is(r.Context().Err(), context.DeadlineExceeded):
		// The request's deadline (Deadline) passed while the store worked:
		// whatever the driver made of it, the store did not answer in time.
		e = herald.ErrUnavailable
	case e == nil && r.Context().Err() != nil && errors.Is(err, r.Context().Err()):
		// The client went away (or the server is stopping): nothing broke.
		logger(r.Context()).InfoContext(r.Context(), "request abandoned", "err", err)
		e = herald.ErrInternal
	case e == nil:
		logger(r.Context()).ErrorContext(r.Context(), "internal error", "err", err)
		e = herald.ErrInternal
	}
	setCode(r.Context(), e.Code)
	if e.Status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(int(RetryUnavailable/time.Second)))
	}
	JSON(w, e.Status, errorBody{StatusCode: e.Status, Path: r.URL.Path, Code: e.Code, Message: e.Message, Details: e.Details})
}

// JSON writes v as a JSON answer with the given status.
func JSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"statusCode":500,"code":"ERR-AB-SYS-00","message":"Internal server error."}`)
	}
	WriteJSON(w, status, b)
}

// WriteJSON writes b, JSON already encoded, as JSON does an answer.
func WriteJSON(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// Mux wraps a ServeMux so that an unknown path answers 404 and a known path
// with the wrong method 405 (with Allow), both in the error shape.
func Mux(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			setRoute(r.Context(), pattern)
			mux.ServeHTTP(w, r)
			return
		}
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := mux.Handler(probe); pattern != "" {
				allow = append(allow, m)
			}
		}
		if len(allow) == 0 {
			Error(w, r, herald.ErrRouteNotFound)
			return
		}
		for _, m := range allow {
			w.Header().Add("Allow", m)
		}
		Error(w, r, herald.ErrMethodNotAllowed)
	})
}

type loggerKey struct{}

// WithLogger returns ctx carrying l.
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}

func logger(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}
