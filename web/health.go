package web

import (
	"net/http"
)

// CommonRoutes are the routes both listeners serve: health and the OpenAPI document.
var CommonRoutes = []string{"GET /healthz", "GET /readyz", "GET /openapi.yaml"}

// Health registers /healthz (the process is up) and /readyz (ready reports
// no error: the database answers and its migrations are current).
func Health(mux *http.ServeMux, ready func(*http.Request) error) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		JSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if ready != nil {
			if err := ready(r); err != nil {
				logger(r.Context()).WarnContext(r.Context(), "not ready", "err", err)
				JSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
				return
			}
		}
		JSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
}

// OpenAPI registers GET /openapi.yaml serving doc.
func OpenAPI(mux *http.ServeMux, doc []byte) {
	mux.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(doc)
	})
}
