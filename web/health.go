package web

import (
	"errors"
	"net/http"
)

// CommonRoutes are the routes both listeners serve: health and the OpenAPI document.
var CommonRoutes = []string{"GET /healthz", "GET /readyz", "GET /openapi.yaml"}

// reasoned is an error that carries a short reason safe to answer to
// anyone (sqlite.Unready is one).
type reasoned interface {
	error
	Reason() string
}

// health is the body of /healthz and /readyz.
type health struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// Health registers /healthz (the process is up) and /readyz (ready reports
// no error: the database answers, its migrations are current and it takes
// writes). A 503 answers the error's Reason when it has one, never its
// text; the whole error is logged.
func Health(mux *http.ServeMux, ready func(*http.Request) error) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		JSON(w, http.StatusOK, health{Status: "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if ready != nil {
			if err := ready(r); err != nil {
				logger(r.Context()).WarnContext(r.Context(), "not ready", "err", err)
				body := health{Status: "unavailable", Reason: "not ready"}
				if re, ok := errors.AsType[reasoned](err); ok {
					body.Reason = re.Reason()
				}
				JSON(w, http.StatusServiceUnavailable, body)
				return
			}
		}
		JSON(w, http.StatusOK, health{Status: "ready"})
	})
}

// OpenAPI registers GET /openapi.yaml serving doc.
func OpenAPI(mux *http.ServeMux, doc []byte) {
	mux.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(doc)
	})
}
