// Package emulator is an FCM HTTP v1 emulator for tests, benchmarks and
// local development: it issues access tokens for the OAuth2 JWT-bearer
// grant, validates and answers messages:send like FCM (with answers chosen
// by token prefix), and lets callers inspect what it received.
package emulator

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Options configures an Emulator. The zero value is usable.
type Options struct {
	// Latency is added to every messages:send answer, to model FCM's
	// round trip.
	Latency time.Duration
	// Now is the clock for receivedAt and token expiry (default time.Now).
	Now func() time.Time
	// BeforeAnswer, when set, is called with the token of each valid send
	// request before it is answered, so an in-process test can hold a
	// wave of sends while it changes something (a device's owner, a
	// token) at a known point.
	BeforeAnswer func(token string)
}

// Received is one message the emulator accepted.
type Received struct {
	ReceivedAt time.Time `json:"receivedAt"`
	Project    string    `json:"project"`
	// Proto is the protocol the request arrived over, e.g. "HTTP/2.0".
	Proto string `json:"proto"`
	// Message is the FCM message object exactly as it was sent.
	Message json.RawMessage `json:"message"`
	token   string
}

// Stats counts messages:send requests since the start or the last reset.
type Stats struct {
	// Received counts every send request, Accepted those answered 200 and
	// Rejected the others.
	Received int `json:"received"`
	Accepted int `json:"accepted"`
	Rejected int `json:"rejected"`
}

// Emulator is an http.Handler that behaves like FCM HTTP v1 and Google's
// token endpoint. It is safe for concurrent use.
type Emulator struct {
	latency      time.Duration
	now          func() time.Time
	beforeAnswer func(token string)
	mux          *http.ServeMux
	nextID       atomic.Uint64
	grants       atomic.Int64

	tokensMu sync.RWMutex
	tokens   map[string]string // access token → project it was issued for
	// tokenStatus, when not 0, is the status the token endpoint answers
	// instead of issuing tokens (an outage of Google's token endpoint).
	tokenStatus int

	mu       sync.Mutex
	messages []Received
	byToken  map[string][]int // token → indexes into messages
	attempts map[string]bool  // tokens whose first attempt has been answered
	stats    Stats
}

// New returns an Emulator.
func New(opts Options) *Emulator {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	e := &Emulator{
		latency:      opts.Latency,
		now:          opts.Now,
		beforeAnswer: opts.BeforeAnswer,
		tokens:       make(map[string]string),
		byToken:      make(map[string][]int),
		attempts:     make(map[string]bool),
	}
	e.mux = e.routes()
	return e
}

// routes lists every endpoint of the emulator.
func (e *Emulator) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", e.handleToken)
	mux.HandleFunc("POST /v1/projects/{project}/messages:send", e.handleSend)
	mux.HandleFunc("GET /emulator/messages", e.handleMessages)
	mux.HandleFunc("DELETE /emulator/messages", e.handleReset)
	mux.HandleFunc("GET /emulator/stats", e.handleStats)
	mux.HandleFunc("POST /emulator/revoke-tokens", e.handleRevokeTokens)
	mux.HandleFunc("PUT /emulator/token-endpoint", e.handleTokenEndpoint)
	return mux
}

// ServeHTTP implements http.Handler.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mux.ServeHTTP(w, r)
}

// Server returns an *http.Server for the emulator on addr that speaks
// HTTP/1.1 and cleartext HTTP/2, so clients exercise HTTP/2 multiplexing as
// they would against FCM.
func (e *Emulator) Server(addr string) *http.Server {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	return &http.Server{
		Addr:              addr,
		Handler:           e,
		Protocols:         &protocols,
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: 1000},
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
}

// Messages returns the accepted messages sent to token, oldest first; all
// accepted messages when token is empty.
func (e *Emulator) Messages(token string) []Received {
	e.mu.Lock()
	defer e.mu.Unlock()
	if token == "" {
		return slices.Clone(e.messages)
	}
	idx := e.byToken[token]
	out := make([]Received, len(idx))
	for i, j := range idx {
		out[i] = e.messages[j]
	}
	return out
}

// Stats returns the send counters.
func (e *Emulator) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stats
}

// CountByToken returns how many messages were accepted for each token.
func (e *Emulator) CountByToken() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	counts := make(map[string]int, len(e.byToken))
	for token, idx := range e.byToken {
		counts[token] = len(idx)
	}
	return counts
}

// TokenGrants returns how many access tokens the emulator has issued, so
// tests can check that senders cache them.
func (e *Emulator) TokenGrants() int {
	return int(e.grants.Load())
}

// RevokeTokens makes every access token issued so far invalid, as a restart
// of FCM's front end or a revoked key does: sends carrying one are answered
// 401 UNAUTHENTICATED. Tokens issued later work.
func (e *Emulator) RevokeTokens() {
	e.tokensMu.Lock()
	defer e.tokensMu.Unlock()
	clear(e.tokens)
}

// SetTokenEndpointStatus makes the token endpoint answer status (e.g. 503)
// instead of issuing tokens; 0 restores it.
func (e *Emulator) SetTokenEndpointStatus(status int) {
	e.tokensMu.Lock()
	defer e.tokensMu.Unlock()
	e.tokenStatus = status
}

// Reset forgets the received messages, the counters and which tokens had
// their first attempt. Issued access tokens stay valid.
func (e *Emulator) Reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.messages = nil
	e.byToken = make(map[string][]int)
	e.attempts = make(map[string]bool)
	e.stats = Stats{}
}

// record counts one send request and stores its message when accepted.
func (e *Emulator) record(accepted bool, rec Received) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stats.Received++
	if !accepted {
		e.stats.Rejected++
		return
	}
	e.stats.Accepted++
	if rec.Message == nil {
		return // validate_only: accepted but not delivered
	}
	if rec.token != "" {
		e.byToken[rec.token] = append(e.byToken[rec.token], len(e.messages))
	}
	e.messages = append(e.messages, rec)
}

// firstAttempt reports whether this is the first send to token, and notes it.
func (e *Emulator) firstAttempt(token string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.attempts[token] {
		return false
	}
	e.attempts[token] = true
	return true
}
