package fcm

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// h2Server is a Go HTTP/2 server on 127.0.0.1 and a pool dialing it.
type h2Server struct {
	srv   *http.Server
	pool  *h2Pool
	conns atomic.Int64 // connections accepted
}

// startH2C serves h in cleartext HTTP/2 (prior knowledge) with conf
// applied to the server's HTTP/2 settings.
func startH2C(t *testing.T, h http.Handler, conf http.HTTP2Config) *h2Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &h2Server{}
	s.srv = &http.Server{Handler: h, Protocols: new(http.Protocols), HTTP2: &conf,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			s.conns.Add(1)
			return context.WithValue(ctx, connKey{}, c)
		}}
	s.srv.Protocols.SetUnencryptedHTTP2(true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.srv.Serve(ln)
	}()
	s.pool, err = newH2Pool(transportConfig{scheme: "http", host: ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.pool.closeIdle()
		_ = s.srv.Close()
		<-done
	})
	return s
}

// connKey carries the server side's net.Conn into a handler's context.
type connKey struct{}

// echo answers 503 with the request's X-Id in Retry-After and its body as
// the body, so each answer tells which request it belongs to.
func echo(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	w.Header().Set("Retry-After", string(body[:bytes.IndexByte(body, ':')]))
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write(body)
}

// sendEcho posts a body starting "id:" and checks that its own answer
// came back.
func sendEcho(ctx context.Context, p *h2Pool, id string, size int) error {
	body := []byte(id + ":" + strings.Repeat("x", max(size-len(id)-1, 0)))
	resp, err := p.post(ctx, time.Time{}, "/v1/projects/p/messages:send", "Bearer t", body)
	if err != nil {
		return err
	}
	if resp.status != http.StatusServiceUnavailable || resp.retryAfter != id || !bytes.Equal(resp.body, body) {
		return fmt.Errorf("request %s: got status %d retry-after %q body of %d bytes, want 503 %q and its own body",
			id, resp.status, resp.retryAfter, len(resp.body), id)
	}
	return nil
}

// sendMany runs n sendEcho concurrently and returns their errors.
func sendMany(p *h2Pool, n, size int) []error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { errs[i] = sendEcho(context.Background(), p, fmt.Sprint("req", i), size) })
	}
	wg.Wait()
	return errs
}

func checkNoErrors(t *testing.T, errs []error) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("send %d: got %v, want nil", i, err)
		}
	}
}

// TestH2ConcurrentSends: many sends at once over cleartext HTTP/2 and
// over TLS, each answer to its own stream, on one connection.
func TestH2ConcurrentSends(t *testing.T) {
	t.Parallel()
	t.Run("Cleartext", func(t *testing.T) {
		t.Parallel()
		s := startH2C(t, http.HandlerFunc(echo), http.HTTP2Config{})
		checkNoErrors(t, sendMany(s.pool, 200, 1500))
		if got := s.conns.Load(); got != 1 {
			t.Errorf("connections: got %d, want 1", got)
		}
	})
	t.Run("TLS", func(t *testing.T) {
		t.Parallel()
		var conns atomic.Int64
		ts := httptest.NewUnstartedServer(http.HandlerFunc(echo))
		ts.EnableHTTP2 = true
		ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				conns.Add(1)
			}
		}
		ts.StartTLS()
		t.Cleanup(ts.Close)
		p := tlsPool(t, ts)
		checkNoErrors(t, sendMany(p, 200, 1500))
		if got := conns.Load(); got != 1 {
			t.Errorf("connections: got %d, want 1", got)
		}
	})
}

// tlsPool returns a pool for the httptest TLS server ts, trusting its
// certificate.
func tlsPool(t *testing.T, ts *httptest.Server) *h2Pool {
	t.Helper()
	u, err := url.Parse(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newH2Pool(transportConfig{scheme: "https", host: u.Host})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ts.Certificate())
	p.tls.RootCAs = roots
	t.Cleanup(p.closeIdle)
	return p
}

// TestH2RefusesHTTP1OverTLS: a TLS server that does not agree to h2 in
// ALPN is refused with a retriable error, not spoken HTTP/1.1 to.
func TestH2RefusesHTTP1OverTLS(t *testing.T) {
	t.Parallel()
	ts := httptest.NewUnstartedServer(http.HandlerFunc(echo))
	ts.StartTLS() // only for its certificate
	t.Cleanup(ts.Close)
	// A TLS server without ALPN: the handshake succeeds, h2 is not agreed.
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: ts.TLS.Certificates})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			defer c.Close()
		}
	}()
	p := tlsPool(t, ts)
	p.addr = ln.Addr().String()
	err = sendEcho(t.Context(), p, "a", 10)
	if err == nil || !strings.Contains(err.Error(), "did not agree to HTTP/2") {
		t.Errorf("got %v, want a refusal naming HTTP/2", err)
	}
}

// TestH2MaxConcurrentStreams: a server allowing 2 streams a connection
// never sees more on one, and every send succeeds.
func TestH2MaxConcurrentStreams(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	active := map[string]int{}
	var most int
	s := startH2C(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		active[r.RemoteAddr]++
		most = max(most, active[r.RemoteAddr])
		mu.Unlock()
		defer func() {
			mu.Lock()
			active[r.RemoteAddr]--
			mu.Unlock()
		}()
		echo(w, r)
	}), http.HTTP2Config{MaxConcurrentStreams: 2})
	checkNoErrors(t, sendMany(s.pool, 100, 800))
	mu.Lock()
	defer mu.Unlock()
	if most > 2 {
		t.Errorf("most streams at once on one connection: got %d, want at most 2", most)
	}
}

// TestH2FlowControl: bodies far larger than the server's stream window
// (and than its connection window) wait for WINDOW_UPDATE and arrive
// whole.
func TestH2FlowControl(t *testing.T) {
	t.Parallel()
	s := startH2C(t, http.HandlerFunc(echo), http.HTTP2Config{MaxReceiveBufferPerStream: 100})
	checkNoErrors(t, sendMany(s.pool, 20, 5000))
	checkNoErrors(t, sendMany(s.pool, 4, 40000)) // beyond the 65,535 connection window together
}

// TestH2ShutdownMidLoad: the server shuts down gracefully (GOAWAY) while
// sends stream in: a send that succeeded was processed once, a send that
// failed was not processed, and none was processed twice.
func TestH2ShutdownMidLoad(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	processed := map[string]int{}
	var s *h2Server
	shutdown := make(chan struct{})
	var once sync.Once
	s = startH2C(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := string(body[:bytes.IndexByte(body, ':')])
		mu.Lock()
		processed[id]++
		n := len(processed)
		mu.Unlock()
		if n == 300 {
			once.Do(func() { close(shutdown) })
		}
		w.Header().Set("Retry-After", id)
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write(body)
	}), http.HTTP2Config{})
	go func() {
		<-shutdown
		_ = s.srv.Shutdown(context.Background())
	}()
	const senders, each = 16, 100
	errs := make([][]error, senders)
	var wg sync.WaitGroup
	for g := range senders {
		errs[g] = make([]error, each)
		wg.Go(func() {
			for i := range each {
				errs[g][i] = sendEcho(context.Background(), s.pool, fmt.Sprintf("g%d-%d", g, i), 300)
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	var ok, failed int
	for g := range senders {
		for i, err := range errs[g] {
			id := fmt.Sprintf("g%d-%d", g, i)
			switch n := processed[id]; {
			case n > 1:
				t.Errorf("%s processed %d times", id, n)
			case err == nil && n != 1:
				t.Errorf("%s succeeded but was processed %d times", id, n)
			case err != nil && n != 0:
				t.Errorf("%s failed (%v) though the server processed it", id, err)
			case err == nil:
				ok++
			default:
				failed++
			}
		}
	}
	if ok < 300 || failed == 0 {
		t.Errorf("got %d sends through and %d failed, want at least 300 through before the shutdown and the rest failed", ok, failed)
	}
}

// TestH2ServerDropsConnection: a connection the server closes fails its
// stream with an error, and the next send works on a new connection.
func TestH2ServerDropsConnection(t *testing.T) {
	t.Parallel()
	var drop atomic.Bool
	drop.Store(true)
	s := startH2C(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if drop.CompareAndSwap(true, false) {
			_ = r.Context().Value(connKey{}).(net.Conn).Close()
			return
		}
		echo(w, r)
	}), http.HTTP2Config{})
	err := sendEcho(t.Context(), s.pool, "first", 100)
	if err == nil || errors.Is(err, errUnprocessed) {
		t.Fatalf("send on the dropped connection: got %v, want a connection error", err)
	}
	if err := sendEcho(t.Context(), s.pool, "second", 100); err != nil {
		t.Fatalf("send after the drop: got %v, want nil", err)
	}
	if got := s.conns.Load(); got != 2 {
		t.Errorf("connections: got %d, want 2", got)
	}
}

// wantOneIdleConn holds the server to one connection accepted, and the
// pool's to no stream open or reserved.
func (s *h2Server) wantOneIdleConn(t *testing.T) {
	t.Helper()
	if got := s.conns.Load(); got != 1 {
		t.Errorf("connections: got %d, want 1", got)
	}
	c := s.pool.conns[0]
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.streams) != 0 || c.reserved != 0 {
		t.Errorf("after the sends: %d streams open and %d reserved, want none", len(c.streams), c.reserved)
	}
}

// TestH2Cancel: a send whose ctx ends mid-request resets its stream (the
// server's handler sees it), is forgotten, and the connection keeps
// working.
func TestH2Cancel(t *testing.T) {
	t.Parallel()
	started, reset := make(chan struct{}), make(chan struct{})
	s := startH2C(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer hang" {
			close(started)
			<-r.Context().Done()
			close(reset)
			return
		}
		echo(w, r)
	}), http.HTTP2Config{})
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-started
		cancel()
	}()
	_, err := s.pool.post(ctx, time.Time{}, "/x", "Bearer hang", []byte("hang:"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled send: got %v, want context.Canceled", err)
	}
	<-reset // the server saw RST_STREAM
	if err := sendEcho(t.Context(), s.pool, "after", 100); err != nil {
		t.Fatalf("send after the cancel: got %v, want nil", err)
	}
	s.wantOneIdleConn(t)
}

// TestH2Deadline: a send still unanswered at its deadline ends with
// context.DeadlineExceeded and resets its stream (the server's handler
// sees it); the sends of the same connection without a deadline are not
// ended, but the connection takes no new one: the next send goes on a
// new connection, and the old one closes once its last stream ends.
func TestH2Deadline(t *testing.T) {
	t.Parallel()
	reset := make(chan struct{})
	s := startH2C(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer hang" {
			<-r.Context().Done()
			if r.URL.Path == "/deadline" {
				close(reset)
			}
			return
		}
		echo(w, r)
	}), http.HTTP2Config{})
	ctx, cancel := context.WithCancel(t.Context())
	waiting := make(chan error, 1)
	go func() { // no deadline: ended only by its ctx, below
		_, err := s.pool.post(ctx, time.Time{}, "/x", "Bearer hang", []byte("hang:"))
		waiting <- err
	}()
	_, err := s.pool.post(t.Context(), time.Now().Add(100*time.Millisecond), "/deadline", "Bearer hang", []byte("hang:"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("send past its deadline: got %v, want context.DeadlineExceeded", err)
	}
	<-reset // the server saw RST_STREAM
	select {
	case err := <-waiting:
		t.Fatalf("the send without a deadline ended with %v, want it still waiting", err)
	default:
	}
	if err := sendEcho(t.Context(), s.pool, "after", 100); err != nil {
		t.Fatalf("send after the deadline: got %v, want nil", err)
	}
	cancel()
	if err := <-waiting; !errors.Is(err, context.Canceled) {
		t.Errorf("the send without a deadline, cancelled: got %v, want context.Canceled", err)
	}
	if got := s.conns.Load(); got != 2 {
		t.Errorf("connections: got %d, want 2 (the one a stream timed out on retired)", got)
	}
	s.pool.mu.Lock()
	defer s.pool.mu.Unlock()
	if len(s.pool.conns) != 1 {
		t.Errorf("connections in the pool: got %d, want 1", len(s.pool.conns))
	}
}

// TestH2LargeErrorBody: an error answer's body is kept up to
// maxErrorBody and the rest not read (the stream is reset); the
// connection keeps working.
func TestH2LargeErrorBody(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte("e"), 3*maxErrorBody)
	s := startH2C(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write(big)
			return
		}
		echo(w, r)
	}), http.HTTP2Config{})
	resp, err := s.pool.post(t.Context(), time.Time{}, "/big", "Bearer t", []byte("{}"))
	if err != nil || resp.status != 500 || !bytes.Equal(resp.body, big[:maxErrorBody]) {
		t.Fatalf("got status %d, %d bytes of body, error %v; want 500 and the first %d bytes", resp.status, len(resp.body), err, maxErrorBody)
	}
	if err := sendEcho(t.Context(), s.pool, "after", 100); err != nil {
		t.Fatalf("send after the large body: got %v, want nil", err)
	}
	if got := s.conns.Load(); got != 1 {
		t.Errorf("connections: got %d, want 1", got)
	}
}
