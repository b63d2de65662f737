package web

import (
	"context"
	"net/http"
	"time"
)

// RequestDeadline bounds each request's work, the store's above all: a
// database that does not answer (frozen, or a black-holed network path)
// makes a request answer 503 when it passes, within DESIGN.md section 4's
// 10 seconds, instead of holding it for as long as the database is gone.
const RequestDeadline = 8 * time.Second

// RetryUnavailable is the Retry-After of a 503: long enough for a
// restarted database or a failed-over node to answer again.
const RetryUnavailable = 5 * time.Second

// Deadline gives every request's context a deadline d from its start, so
// every store call made for it ends by then (both engines' drivers stop
// at a context's deadline); Error answers a request whose deadline passed
// 503 ERR-AB-SYS-01.
func Deadline(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
