package fcm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/heraldpush/herald"
)

// The conformance suite: both transports driven against hostile servers
// (hostile_test.go), each request held to one rule: it is answered, or it
// fails with an error that says whether it may have reached the server
// (Unprocessed) and that is true; it never waits long past its deadline,
// is never sent again once the server processed it, and is not reported
// lost when the server's answer reached the client in time. Where net/http's
// transport cannot keep a rule, the case says so (standardBreaks) rather
// than loosening it for the lean one.

// hangMargin is how far past its deadline a send may return before the
// suite calls it hung: far beyond the transports' own lateness (h2Watch),
// far below the PING liveness check that would end a hang otherwise.
const hangMargin = 3 * time.Second

// transportKinds are the transports the suite runs.
var transportKinds = []string{TransportLean, TransportStandard}

// newTestTransport builds a transport of kind for the base URL baseURL.
func newTestTransport(t *testing.T, kind, baseURL string, cfg transportConfig) transport {
	t.Helper()
	u, err := url.Parse(baseURL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.scheme, cfg.host = u.Scheme, u.Host
	tr, err := newTransport(kind, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.closeIdle)
	return tr
}

// result is how one request of a drive ended.
type result struct {
	id       string
	resp     response
	err      error
	deadline time.Time
	returned time.Time
}

// drive sends n requests, conc at a time, each with a body of size bytes
// starting "id:" and a deadline timeout after it starts. It returns
// within about timeout+2*hangMargin per round of conc requests, hung
// transport or not, if the transport heeds its ctx.
func drive(tr transport, n, conc, size int, timeout time.Duration) []result {
	results := make([]result, n)
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			id := "r" + strconv.Itoa(i)
			body := []byte(id + ":" + strings.Repeat("x", max(size-len(id)-1, 0)))
			r := result{id: id, deadline: time.Now().Add(timeout)}
			// The ctx ends well after the deadline, to bound the drive even
			// for a transport that misses deadlines (check reports it).
			ctx, cancel := context.WithDeadline(context.Background(), r.deadline.Add(2*hangMargin))
			defer cancel()
			r.resp, r.err = tr.post(ctx, r.deadline, "/v1/projects/p/messages:send", "Bearer t", body)
			r.returned = time.Now()
			results[i] = r
		})
	}
	wg.Wait()
	return results
}

// rules are what a scenario holds each request to beyond the suite's.
type rules struct {
	// allAnswered: every request must be answered (the server answers
	// every request it takes, and refuses the others unprocessed).
	allAnswered bool
	// standardBreaks names the rule net/http's transport breaks in this
	// scenario, and why; its violations are logged, not failed.
	standardBreaks string
}

// check holds every result to the suite's rules: answered 200 and
// processed once; or failed, unprocessed only if the server did not
// process it, never processed twice, and never returned hangMargin past
// its deadline; and an answer the server wrote is not reported lost.
func (h *hostile) check(t *testing.T, kind string, results []result, r rules) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	var problems []string
	var answered, unprocessed, maybe int
	var latest time.Duration // the latest return past a deadline
	for _, res := range results {
		latest = max(latest, res.returned.Sub(res.deadline))
		n := h.processed[res.id]
		switch {
		case res.returned.After(res.deadline.Add(hangMargin)):
			problems = append(problems, fmt.Sprintf("%s returned %v past its deadline (%v)", res.id, res.returned.Sub(res.deadline).Round(time.Millisecond), res.err))
		case n > 1:
			problems = append(problems, fmt.Sprintf("%s processed %d times", res.id, n))
		case res.err == nil && (res.resp.status != 200 || n != 1):
			problems = append(problems, fmt.Sprintf("%s: got status %d processed %d times, want 200 once", res.id, res.resp.status, n))
		case res.err != nil && Unprocessed(res.err) && n != 0:
			problems = append(problems, fmt.Sprintf("%s failed as unprocessed (%v) though the server processed it", res.id, res.err))
		case res.err != nil && h.answered[res.id] && !errors.Is(res.err, context.DeadlineExceeded):
			// (An answer delivered after the deadline is rightly lost.)
			problems = append(problems, fmt.Sprintf("%s failed (%v) though the server's answer reached the client", res.id, res.err))
		case res.err != nil && r.allAnswered:
			problems = append(problems, fmt.Sprintf("%s failed (%v), want it answered", res.id, res.err))
		}
		switch {
		case res.err == nil:
			answered++
		case Unprocessed(res.err):
			unprocessed++
		default:
			maybe++
		}
	}
	t.Logf("%s: %d answered, %d failed unprocessed, %d failed maybe processed; %d connections; latest return %v past its deadline",
		kind, answered, unprocessed, maybe, h.conns.Load(), latest.Round(time.Millisecond))
	reportAll(t, kind, r.standardBreaks, problems)
}

// reportAll fails t with the first problems, or only logs them for the
// standard transport when the scenario says it breaks the rules (breaks).
func reportAll(t *testing.T, kind, breaks string, problems []string) {
	t.Helper()
	if len(problems) == 0 {
		return
	}
	report := t.Errorf
	if kind == TransportStandard && breaks != "" {
		t.Logf("net/http's transport breaks the rules here, as expected: %s", breaks)
		report = t.Logf
	}
	for i, p := range problems {
		if i == 10 {
			report("… and %d more", len(problems)-10)
			break
		}
		report("%s", p)
	}
}

// TestConformance drives both transports against each hostile server.
func TestConformance(t *testing.T) {
	t.Parallel()
	for _, kind := range transportKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) {
					t.Parallel()
					sc.run(t, kind)
				})
			}
		})
	}
}

// scenario is one hostile server and the load driven against it.
type scenario struct {
	name string
	run  func(t *testing.T, kind string)
}

var scenarios = []scenario{
	{"GoAwayEvery10", testGoAwayEvery},
	{"RefusedStream", testRefusedStream},
	{"StopsReading", testStopsReading},
	{"ResetsAfter10", testResetsAfter},
	{"ShedsEveryConnection", testShedsEveryConnection},
	{"EarlyAnswer", testEarlyAnswer},
	{"Proxy", testProxy},
	{"ServerShutdown", testServerShutdown},
}

// testGoAwayEvery: each connection processes 10 streams, then sends
// GOAWAY naming the 10th and drops the streams above it unprocessed.
func testGoAwayEvery(t *testing.T, kind string) {
	h := startHostile(t, nil, func(_ int64, hc *hconn) {
		for n := 0; ; {
			stream, id, ok := hc.next()
			if !ok {
				return
			}
			if n++; n > 10 {
				continue // above the GOAWAY: not processed
			}
			hc.answer(stream, id)
			if n == 10 {
				_ = hc.fr.WriteGoAway(stream, http2.ErrCodeNo, nil)
			}
		}
	})
	tr := newTestTransport(t, kind, h.url(), transportConfig{})
	h.check(t, kind, drive(tr, 500, 50, 100, 5*time.Second), rules{allAnswered: true,
		standardBreaks: "x/net's backoff between retries doubles from 1 s, so a request refused again and again may run out its deadline"})
}

// testRefusedStream: every third request is refused (REFUSED_STREAM).
func testRefusedStream(t *testing.T, kind string) {
	var requests atomic.Int64
	h := startHostile(t, nil, func(_ int64, hc *hconn) {
		for {
			stream, id, ok := hc.next()
			if !ok {
				return
			}
			if requests.Add(1)%3 == 0 {
				_ = hc.fr.WriteRSTStream(stream, http2.ErrCodeRefusedStream)
				continue
			}
			hc.answer(stream, id)
		}
	})
	tr := newTestTransport(t, kind, h.url(), transportConfig{})
	h.check(t, kind, drive(tr, 500, 50, 100, 5*time.Second), rules{allAnswered: true,
		standardBreaks: "x/net's backoff between retries doubles from 1 s, so a request refused again and again may run out its deadline"})
}

// testStopsReading: each connection answers 5 requests, then reads
// nothing more, so 32 KB bodies soon fill every buffer on the way: each
// send must still end by its deadline of 300 ms.
func testStopsReading(t *testing.T, kind string) {
	h := startHostile(t, nil, func(_ int64, hc *hconn) {
		for range 5 {
			stream, id, ok := hc.next()
			if !ok {
				return
			}
			hc.answer(stream, id)
		}
		<-hc.stop
	})
	tr := newTestTransport(t, kind, h.url(), transportConfig{})
	h.check(t, kind, drive(tr, 300, 50, 32<<10, 300*time.Millisecond), rules{})
}

// testResetsAfter: each connection answers 10 requests, then resets the
// connection (a close with SO_LINGER 0) with the requests it took after
// them unread. Only answers the client's kernel acknowledged before the
// reset (SIOCOUTQ, on Linux) count as delivered: a reset drops the rest.
func testResetsAfter(t *testing.T, kind string) {
	h := startHostile(t, nil, func(_ int64, hc *hconn) {
		var ids []string
		for range 10 {
			stream, id, ok := hc.next()
			if !ok {
				return
			}
			hc.process(stream, id)
			ids = append(ids, id)
		}
		// A few milliseconds for the acknowledgement, no more: the reset
		// must still meet the client busy with its reads and writes.
		for deadline := time.Now().Add(5 * time.Millisecond); time.Now().Before(deadline); runtime.Gosched() {
			if n, ok := unacked(hc.nc); !ok {
				break
			} else if n == 0 {
				hc.h.delivered(ids...)
				break
			}
		}
		_ = hc.nc.(*net.TCPConn).SetLinger(0)
	})
	tr := newTestTransport(t, kind, h.url(), transportConfig{})
	h.check(t, kind, drive(tr, 500, 50, 2000, 10*time.Second), rules{
		standardBreaks: "x/net closes a connection whose write failed without reading the answers already sent"})
}

// testShedsEveryConnection: the server closes each connection as it
// accepts it. Every send fails, none hangs, and the lean transport knows
// none was processed.
func testShedsEveryConnection(t *testing.T, kind string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hostile{addr: ln.Addr().String(), processed: map[string]int{}, answered: map[string]bool{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			h.conns.Add(1)
			_ = nc.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	tr := newTestTransport(t, kind, h.url(), transportConfig{})
	results := drive(tr, 300, 30, 100, 2*time.Second)
	h.check(t, kind, results, rules{})
	for _, r := range results {
		if r.err == nil {
			t.Fatalf("%s: answered by a server that answers nothing", r.id)
		}
		if kind == TransportLean && !Unprocessed(r.err) {
			t.Fatalf("%s: got %v, want an error saying it was not processed", r.id, r.err)
		}
	}
}

// testEarlyAnswer: the server answers each request on its HEADERS,
// before the body, which its stream window of 16 bytes keeps from
// arriving whole: the client must end each stream it no longer sends on
// (RST_STREAM), not leave it half-closed at the server.
func testEarlyAnswer(t *testing.T, kind string) {
	var mu sync.Mutex
	open := map[string]map[uint32]bool{} // per connection, the streams the client has not closed
	h := startHostile(t, []http2.Setting{{ID: http2.SettingInitialWindowSize, Val: 16}}, func(n int64, hc *hconn) {
		conn := strconv.FormatInt(n, 10)
		hc.onFrame = func(f http2.Frame) {
			mu.Lock()
			defer mu.Unlock()
			if open[conn] == nil {
				open[conn] = map[uint32]bool{}
			}
			switch f := f.(type) {
			case *http2.MetaHeadersFrame:
				open[conn][f.StreamID] = true
				hc.write200(f.StreamID)
			case *http2.DataFrame:
				if f.StreamEnded() {
					delete(open[conn], f.StreamID)
				}
			case *http2.RSTStreamFrame:
				delete(open[conn], f.StreamID)
			}
		}
		hc.drain()
	})
	tr := newTestTransport(t, kind, h.url(), transportConfig{})
	for _, r := range drive(tr, 50, 10, 100, 10*time.Second) {
		if r.err != nil || r.resp.status != 200 {
			t.Errorf("%s: got status %d, error %v, want 200", r.id, r.resp.status, r.err)
		}
	}
	// The reset may follow the answer's return: poll for it.
	deadline := time.Now().Add(2 * time.Second)
	for {
		mu.Lock()
		var left []string
		for conn, streams := range open {
			for s := range streams {
				left = append(left, fmt.Sprintf("%s/%d", conn, s))
			}
		}
		mu.Unlock()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			reportAll(t, kind, "x/net's transport leaves the streams of its last connection half-closed",
				[]string{fmt.Sprintf("streams left half-closed at the server (connection/stream): %v", left)})
			return
		}
		time.Sleep(10 * time.Millisecond) // polls for the resets
	}
}

// testServerShutdown: Go's own HTTP/2 server shuts down gracefully
// (GOAWAY, then no more connections) once it processed 200 requests.
func testServerShutdown(t *testing.T, kind string) {
	h := &hostile{processed: map[string]int{}, answered: map[string]bool{}}
	var once sync.Once
	shutdown := make(chan struct{})
	srv := &http.Server{Protocols: new(http.Protocols), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id, _, _ := bytes.Cut(body, []byte(":"))
		h.mu.Lock()
		h.processed[string(id)]++
		n := len(h.processed)
		h.mu.Unlock()
		if n == 200 {
			once.Do(func() { close(shutdown) })
		}
		w.WriteHeader(http.StatusOK)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		h.mu.Lock()
		h.answered[string(id)] = true
		h.mu.Unlock()
	})}
	srv.Protocols.SetUnencryptedHTTP2(true)
	srv.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			h.conns.Add(1)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.addr = ln.Addr().String()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	go func() {
		<-shutdown
		_ = srv.Shutdown(context.Background())
	}()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	tr := newTestTransport(t, kind, h.url(), transportConfig{})
	h.check(t, kind, drive(tr, 500, 50, 100, 3*time.Second), rules{})
}

// testProxy: sends to an https origin go through the CONNECT proxy the
// proxy function names, one tunnel a connection.
func testProxy(t *testing.T, kind string) {
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			http.Error(w, "want HTTP/2", http.StatusHTTPVersionNotSupported)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	ts.EnableHTTP2 = true
	ts.StartTLS()
	t.Cleanup(ts.Close)
	proxy := startConnectProxy(t)
	var asked atomic.Int64
	tr := newTestTransport(t, kind, ts.URL, transportConfig{
		tlsConfig: ts.Client().Transport.(*http.Transport).TLSClientConfig,
		proxy: func(u *url.URL) (*url.URL, error) {
			asked.Add(1)
			if u.Scheme != "https" || u.Host != strings.TrimPrefix(ts.URL, "https://") {
				return nil, fmt.Errorf("asked for a proxy for %v, want the origin %s", u, ts.URL)
			}
			return proxy.url, nil
		},
	})
	for _, r := range drive(tr, 50, 10, 100, 10*time.Second) {
		if r.err != nil || r.resp.status != 200 {
			t.Errorf("%s: got status %d, error %v, want 200", r.id, r.resp.status, r.err)
		}
	}
	if got := proxy.tunnels.Load(); got < 1 {
		t.Errorf("tunnels through the proxy: got %d, want at least 1", got)
	}
	if asked.Load() == 0 {
		t.Error("the proxy function was never asked")
	}
}

// TestUnprocessedThroughSendError: a caller of Send sees Unprocessed
// through the SendError it gets.
func TestUnprocessedThroughSendError(t *testing.T) {
	t.Parallel()
	refused := &herald.SendError{Class: herald.SendRetry, Err: fmt.Errorf("%w: stream refused", errUnprocessed)}
	if !Unprocessed(refused) {
		t.Errorf("Unprocessed(%v): got false, want true", refused)
	}
	if lost := (&herald.SendError{Class: herald.SendRetry, Err: errors.New("connection lost")}); Unprocessed(lost) {
		t.Errorf("Unprocessed(%v): got true, want false", lost)
	}
}
