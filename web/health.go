package web

import (
	"errors"
	"net/http"
	"sync/atomic"
)

// CommonRoutes are the routes both listeners serve: health and the OpenAPI document.
var CommonRoutes = []string{"GET /healthz", "GET /readyz", "GET /openapi.yaml"}

// reasoned is an error that carries a short reason safe to answer to
// anyone (sqlstore.Unready is one).
type reasoned interface {
	error
	Reason() string
}

// migrationStater is an error that says how far a readiness probe got
// with the migrations (sqlstore.Unready is one).
type migrationStater interface {
	error
	Migrations() string
}

// Readiness is a readiness probe's answer: the database engine, and why
// the service cannot take traffic, if it cannot.
type Readiness struct {
	// Database names the engine: "sqlite" or "postgres".
	Database string
	// Err is nil when the database answers, its migrations are current
	// and it takes writes.
	Err error
}

// health is the body of /healthz and /readyz.
type health struct {
	Status string `json:"status"`
	// Database and Migrations (current, pending or unknown) are
	// /readyz's only.
	Database   string `json:"database,omitempty"`
	Migrations string `json:"migrations,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// Health registers /healthz (the process is up) and /readyz (ready reports
// no error: the database answers, its migrations are current and it takes
// writes). /readyz names the engine and the state of the migrations; a
// 503 answers the error's Reason when it has one, never its text. The
// whole error is logged when readiness is lost, and a line when it comes
// back: not once per probe, which a load balancer repeats every few
// seconds for as long as an outage lasts.
func Health(mux *http.ServeMux, ready func(*http.Request) Readiness) {
	var unready atomic.Bool
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		JSON(w, http.StatusOK, health{Status: "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if ready == nil {
			JSON(w, http.StatusOK, health{Status: "ready"})
			return
		}
		state := ready(r)
		if state.Err == nil {
			if unready.CompareAndSwap(true, false) {
				logger(r.Context()).InfoContext(r.Context(), "ready again")
			}
			JSON(w, http.StatusOK, health{Status: "ready", Database: state.Database, Migrations: "current"})
			return
		}
		if unready.CompareAndSwap(false, true) {
			logger(r.Context()).WarnContext(r.Context(), "not ready", "err", state.Err)
		}
		body := health{Status: "unavailable", Database: state.Database, Migrations: "unknown", Reason: "not ready"}
		if re, ok := errors.AsType[reasoned](state.Err); ok {
			body.Reason = re.Reason()
		}
		if ms, ok := errors.AsType[migrationStater](state.Err); ok && ms.Migrations() != "" {
			body.Migrations = ms.Migrations()
		}
		JSON(w, http.StatusServiceUnavailable, body)
	})
}

// OpenAPI registers GET /openapi.yaml serving doc.
func OpenAPI(mux *http.ServeMux, doc []byte) {
	mux.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(doc)
	})
}
