package emulator

import (
	"bufio"
	"encoding/json"
	"net/http"
	"time"
)

// handleMessages answers GET /emulator/messages[?token=T].
func (e *Emulator) handleMessages(w http.ResponseWriter, r *http.Request) {
	msgs := e.Messages(r.URL.Query().Get("token"))
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriter(w)
	_ = writeMessages(bw, msgs)
	_ = bw.Flush()
}

// writeMessages writes {"messages":[…]} with each message's bytes exactly as
// received: encoding/json would compact and re-escape them.
func writeMessages(bw *bufio.Writer, msgs []Received) error {
	_, _ = bw.WriteString(`{"messages":[`)
	for i, m := range msgs {
		if i > 0 {
			_ = bw.WriteByte(',')
		}
		head, err := json.Marshal(struct {
			ReceivedAt time.Time `json:"receivedAt"`
			Project    string    `json:"project"`
			Proto      string    `json:"proto"`
		}{m.ReceivedAt, m.Project, m.Proto})
		if err != nil {
			return err
		}
		_, _ = bw.Write(head[:len(head)-1]) // drop the closing brace
		_, _ = bw.WriteString(`,"message":`)
		_, _ = bw.Write(m.Message)
		_ = bw.WriteByte('}')
	}
	_, err := bw.WriteString("]}\n")
	return err
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

// handleRevokeTokens answers POST /emulator/revoke-tokens.
func (e *Emulator) handleRevokeTokens(w http.ResponseWriter, _ *http.Request) {
	e.RevokeTokens()
	w.WriteHeader(http.StatusNoContent)
}

// handleTokenEndpoint answers PUT /emulator/token-endpoint {"status": N}:
// the token endpoint answers N (400–599) from now on, or works again with 0.
func (e *Emulator) handleTokenEndpoint(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Status int `json:"status"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<10)).Decode(&body); err != nil ||
		body.Status != 0 && (body.Status < 400 || body.Status > 599) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": `want {"status": 0 or 400–599}`})
		return
	}
	e.SetTokenEndpointStatus(body.Status)
	w.WriteHeader(http.StatusNoContent)
}
