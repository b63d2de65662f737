package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"time"
)

// requestInfo is filled in while a request is handled, so the log line
// written after it can name the app the request authenticated as.
type requestInfo struct{ appID, route, code string }

type infoKey struct{}

// SetAppID records the app a request acts for, for its log line.
func SetAppID(ctx context.Context, appID string) {
	if ri, ok := ctx.Value(infoKey{}).(*requestInfo); ok {
		ri.appID = appID
	}
}

// setCode records the error code a request was answered with, for its
// log line.
func setCode(ctx context.Context, code string) {
	if ri, ok := ctx.Value(infoKey{}).(*requestInfo); ok {
		ri.code = code
	}
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (Extend).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Observer is told of every request once it is answered, with the route
// pattern it matched ("unmatched" for none); metrics use it.
type Observer func(method, route string, status int, elapsed time.Duration)

func setRoute(ctx context.Context, route string) {
	if ri, ok := ctx.Value(infoKey{}).(*requestInfo); ok {
		ri.route = route
	}
}

// Logged writes one log line per request: request id, method, path, app id,
// status, latency and, for an error answer, its code, and tells observe (when not nil). Headers and bodies,
// which carry keys and secrets, are never logged.
func Logged(l *slog.Logger, observe Observer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if id == "" || len(id) > 64 {
			var b [8]byte
			rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-Id", id)
		ri := &requestInfo{}
		rl := l.With("requestId", id)
		ctx := context.WithValue(WithLogger(r.Context(), rl), infoKey{}, ri)
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r.WithContext(ctx))
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		if observe != nil {
			route := ri.route
			if route == "" {
				route = "unmatched"
			}
			observe(r.Method, route, rec.status, time.Since(start))
		}
		attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.String("appId", ri.appID), slog.Int("status", rec.status),
			slog.Duration("latency", time.Since(start))}
		if ri.code != "" {
			attrs = append(attrs, slog.String("code", ri.code))
		}
		rl.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
	})
}
