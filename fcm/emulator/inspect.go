package emulator

import "net/http"

// handleMessages answers GET /emulator/messages[?token=T].
func (e *Emulator) handleMessages(w http.ResponseWriter, r *http.Request) {
	msgs := e.Messages(r.URL.Query().Get("token"))
	if msgs == nil {
		msgs = []Received{}
	}
	writeJSON(w, http.StatusOK, map[string][]Received{"messages": msgs})
}

// handleReset answers DELETE /emulator/messages.
func (e *Emulator) handleReset(w http.ResponseWriter, _ *http.Request) {
	e.Reset()
	w.WriteHeader(http.StatusNoContent)
}

// handleStats answers GET /emulator/stats.
func (e *Emulator) handleStats(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, e.Stats())
}
