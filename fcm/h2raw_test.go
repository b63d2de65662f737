package fcm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// rawServer speaks HTTP/2 frame by frame on 127.0.0.1, for the cases Go's
// server cannot be made to produce on cue (REFUSED_STREAM, GOAWAY below a
// stream, a PING left unanswered). serve runs once per connection, after
// the preface and the server's SETTINGS (settings); n counts connections
// from 1.
type rawServer struct {
	pool  *h2Pool
	conns atomic.Int64
}

func startRaw(t *testing.T, settings []http2.Setting, serve func(n int64, sc *rawConn)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			n := s.conns.Add(1)
			go func() {
				defer nc.Close()
				if _, err := io.ReadFull(nc, make([]byte, len(http2.ClientPreface))); err != nil {
					return
				}
				sc := &rawConn{fr: http2.NewFramer(nc, nc)}
				sc.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
				sc.henc = hpack.NewEncoder(&sc.hbuf)
				if sc.fr.WriteSettings(settings...) != nil {
					return
				}
				serve(n, sc)
			}()
		}
	}()
	s.pool, err = newH2Pool(transportConfig{scheme: "http", host: ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		s.pool.closeIdle()
	})
	return s
}

// rawConn is the server side of one connection.
type rawConn struct {
	fr   *http2.Framer
	henc *hpack.Encoder
	hbuf bytes.Buffer
}

// request reads frames until a request is complete and returns its
// stream id; 0 when the connection ended.
func (sc *rawConn) request() uint32 {
	for {
		f, err := sc.fr.ReadFrame()
		if err != nil {
			return 0
		}
		switch f := f.(type) {
		case *http2.MetaHeadersFrame:
			if f.StreamEnded() {
				return f.StreamID
			}
		case *http2.DataFrame:
			if f.StreamEnded() {
				return f.StreamID
			}
		}
	}
}

// respond answers stream id with status and no body.
func (sc *rawConn) respond(id uint32, status int) {
	sc.hbuf.Reset()
	_ = sc.henc.WriteField(hpack.HeaderField{Name: ":status", Value: strconv.Itoa(status)})
	_ = sc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: sc.hbuf.Bytes(), EndStream: true, EndHeaders: true})
}

// drain reads until the connection ends.
func (sc *rawConn) drain() {
	for {
		if _, err := sc.fr.ReadFrame(); err != nil {
			return
		}
	}
}

func postRaw(t *testing.T, p *h2Pool) (response, error) {
	t.Helper()
	return p.post(t.Context(), time.Time{}, "/v1/projects/p/messages:send", "Bearer t", []byte(`{"message":{}}`))
}

// TestH2RefusedStreamRetried: a stream refused (REFUSED_STREAM) was not
// processed, so it is sent again, on another connection, while its
// deadline allows: refused three times, it is answered at the fourth;
// refused always, it fails once its deadline is near (unprocessed, or
// at the deadline with the last send in flight), after many resends.
func TestH2RefusedStreamRetried(t *testing.T) {
	t.Parallel()
	t.Run("ThenAnswered", func(t *testing.T) {
		t.Parallel()
		var requests atomic.Int64
		s := startRaw(t, nil, func(_ int64, sc *rawConn) {
			for {
				id := sc.request()
				if id == 0 {
					return
				}
				if requests.Add(1) <= 3 {
					_ = sc.fr.WriteRSTStream(id, http2.ErrCodeRefusedStream)
					continue
				}
				sc.respond(id, 200)
			}
		})
		if resp, err := postRaw(t, s.pool); err != nil || resp.status != 200 {
			t.Fatalf("refused three times: got status %d error %v, want 200", resp.status, err)
		}
		if got := requests.Load(); got != 4 {
			t.Errorf("requests: got %d, want 4", got)
		}
		if got := s.conns.Load(); got < 2 {
			t.Errorf("connections: got %d, want the resends on another", got)
		}
	})
	t.Run("Always", func(t *testing.T) {
		t.Parallel()
		var requests atomic.Int64
		s := startRaw(t, nil, func(_ int64, sc *rawConn) {
			for {
				id := sc.request()
				if id == 0 {
					return
				}
				requests.Add(1)
				_ = sc.fr.WriteRSTStream(id, http2.ErrCodeRefusedStream)
			}
		})
		// 2 s leaves time for about eight sends (retryBackoff), however
		// slow the machine: the test wants more than two.
		_, err := s.pool.post(t.Context(), time.Now().Add(2*time.Second), "/x", "Bearer t", []byte("{}"))
		// The last send may still be in flight at the deadline.
		if !errors.Is(err, errUnprocessed) && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("refused always: got %v, want errUnprocessed or context.DeadlineExceeded", err)
		}
		if got := requests.Load(); got <= 2 {
			t.Errorf("requests: got %d, want more than 2 within the deadline", got)
		}
	})
}

// TestRetryBackoff: none before the first resend, then 10 ms doubling to
// a second.
func TestRetryBackoff(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		attempt int
		want    time.Duration
	}{
		{1, 0}, {2, 10 * time.Millisecond}, {3, 20 * time.Millisecond}, {4, 40 * time.Millisecond},
		{8, 640 * time.Millisecond}, {9, time.Second}, {60, time.Second},
	} {
		if got := retryBackoff(tt.attempt); got != tt.want {
			t.Errorf("retryBackoff(%d): got %v, want %v", tt.attempt, got, tt.want)
		}
	}
}

// TestH2GoAway: a stream above GOAWAY's last stream id is sent again on a
// new connection; a stream at or below it is answered on the old one,
// which takes no new stream.
func TestH2GoAway(t *testing.T) {
	t.Parallel()
	t.Run("Unprocessed", func(t *testing.T) {
		t.Parallel()
		s := startRaw(t, nil, func(n int64, sc *rawConn) {
			id := sc.request()
			if n == 1 {
				_ = sc.fr.WriteGoAway(0, http2.ErrCodeNo, nil)
				sc.drain()
				return
			}
			sc.respond(id, 200)
			sc.drain()
		})
		if resp, err := postRaw(t, s.pool); err != nil || resp.status != 200 {
			t.Fatalf("got status %d error %v, want 200 on the second connection", resp.status, err)
		}
		if got := s.conns.Load(); got != 2 {
			t.Errorf("connections: got %d, want 2", got)
		}
	})
	t.Run("Processed", func(t *testing.T) {
		t.Parallel()
		s := startRaw(t, nil, func(n int64, sc *rawConn) {
			id := sc.request()
			if n == 1 {
				_ = sc.fr.WriteGoAway(id, http2.ErrCodeNo, nil)
			}
			sc.respond(id, 200)
			sc.drain()
		})
		for i := range 2 {
			if resp, err := postRaw(t, s.pool); err != nil || resp.status != 200 {
				t.Fatalf("send %d: got status %d error %v, want 200", i, resp.status, err)
			}
		}
		if got := s.conns.Load(); got != 2 {
			t.Errorf("connections: got %d, want 2 (no new stream after GOAWAY)", got)
		}
	})
}

// TestH2PingTimeout: a connection with a stream open that stays silent
// is sent a PING, and closed when no ack comes: the send fails
// retriably instead of waiting for its own deadline.
func TestH2PingTimeout(t *testing.T) {
	t.Parallel()
	s := startRaw(t, nil, func(_ int64, sc *rawConn) {
		sc.request()
		sc.drain() // no answer, no PING ack
	})
	s.pool.pingAfter, s.pool.pingTimeout = time.Millisecond, time.Millisecond
	// (Whether the PING left before the close is not observed: with
	// these timings the close may drop it unwritten.)
	if _, err := postRaw(t, s.pool); !errors.Is(err, errPingTimeout) {
		t.Fatalf("got %v, want errPingTimeout", err)
	}
}

// TestH2StreamIDsExhausted: a connection whose stream ids are used up
// takes no new stream; the next send opens a new connection.
func TestH2StreamIDsExhausted(t *testing.T) {
	t.Parallel()
	s := startH2C(t, http.HandlerFunc(echo), http.HTTP2Config{})
	s.pool.maxStreamID = 3 // streams 1 and 3
	for _, id := range []string{"a", "b", "c"} {
		if err := sendEcho(t.Context(), s.pool, id, 10); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.conns.Load(); got != 2 {
		t.Errorf("connections: got %d, want 2", got)
	}
}

// TestH2IdleClose: a connection without streams for idleTimeout is
// closed and dropped from the pool; the next send dials anew.
func TestH2IdleClose(t *testing.T) {
	t.Parallel()
	s := startH2C(t, http.HandlerFunc(echo), http.HTTP2Config{})
	s.pool.idleTimeout = time.Millisecond
	if err := sendEcho(t.Context(), s.pool, "a", 10); err != nil {
		t.Fatal(err)
	}
	for {
		s.pool.mu.Lock()
		n := len(s.pool.conns)
		s.pool.mu.Unlock()
		if n == 0 {
			break
		}
		time.Sleep(time.Millisecond) // polls for the timer's close
	}
	if err := sendEcho(t.Context(), s.pool, "b", 10); err != nil {
		t.Fatal(err)
	}
	// Two, or more when a connection dialed for "b" fell idle (a
	// millisecond) before "b" took it.
	if got := s.conns.Load(); got < 2 {
		t.Errorf("connections: got %d, want a new one after the idle close", got)
	}
}

// TestH2NoStreamsAllowed: a server whose SETTINGS allow no stream is an
// error, not a loop of dials.
func TestH2NoStreamsAllowed(t *testing.T) {
	t.Parallel()
	s := startRaw(t, []http2.Setting{{ID: http2.SettingMaxConcurrentStreams, Val: 0}}, func(_ int64, sc *rawConn) {
		sc.drain()
	})
	if _, err := postRaw(t, s.pool); err == nil || !strings.Contains(err.Error(), "allows no stream") {
		t.Fatalf("got %v, want an error saying the server allows no stream", err)
	}
	if got := s.conns.Load(); got != 1 {
		t.Errorf("connections: got %d, want 1", got)
	}
}

// TestH2ResetBeforeSlotFreed: a stream ended by its caller keeps its slot
// until its RST_STREAM is written, so with one stream allowed the next
// request's HEADERS never reaches the server before the reset.
func TestH2ResetBeforeSlotFreed(t *testing.T) {
	t.Parallel()
	order := make(chan string, 8)
	s := startRaw(t, []http2.Setting{{ID: http2.SettingMaxConcurrentStreams, Val: 1}}, func(n int64, sc *rawConn) {
		for {
			f, err := sc.fr.ReadFrame()
			if err != nil {
				return
			}
			switch f := f.(type) {
			case *http2.MetaHeadersFrame:
				order <- fmt.Sprintf("HEADERS %d/%d", n, f.StreamID)
				if n != 1 || f.StreamID != 1 { // the first is left unanswered
					sc.respond(f.StreamID, 200)
				}
			case *http2.RSTStreamFrame:
				order <- fmt.Sprintf("RST_STREAM %d/%d", n, f.StreamID)
			}
		}
	})
	next := func(want string) {
		t.Helper()
		if got := <-order; got != want {
			t.Fatalf("frames at the server (connection/stream): got %q, want %q", got, want)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan error, 1)
	go func() {
		_, err := s.pool.post(ctx, time.Time{}, "/x", "Bearer t", nil)
		first <- err
	}()
	next("HEADERS 1/1")
	s.pool.mu.Lock()
	c := s.pool.conns[0]
	s.pool.mu.Unlock()
	c.wmu.Lock() // holds the reset back
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled send: got %v, want context.Canceled", err)
	}
	if c.reserve() {
		t.Error("the cancelled stream's slot was free before its reset was written")
		c.mu.Lock()
		c.reserved--
		c.mu.Unlock()
	}
	c.wmu.Unlock()
	next("RST_STREAM 1/1")
	for deadline := time.Now().Add(5 * time.Second); ; {
		c.mu.Lock()
		free := c.resetting == 0
		c.mu.Unlock()
		if free {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slot was not freed after the reset was written")
		}
		time.Sleep(time.Millisecond) // polls for the reset's bookkeeping
	}
	if resp, err := postRaw(t, s.pool); err != nil || resp.status != 200 {
		t.Fatalf("second send: got status %d error %v, want 200", resp.status, err)
	}
	next("HEADERS 1/3")
}

// TestH2DeadConnDropped: a connection that dies as it is opened (the
// server sends its SETTINGS and hangs up), before the dial adds it to
// the pool, is not added: it would stay there for good.
func TestH2DeadConnDropped(t *testing.T) {
	t.Parallel()
	s := startRaw(t, nil, func(int64, *rawConn) {}) // hangs up after its SETTINGS
	c, err := s.pool.open()
	if err != nil {
		t.Skipf("the open failed already (%v): nothing to add", err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		c.mu.Lock()
		dead := c.err != nil
		c.mu.Unlock()
		if dead {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the connection did not die when the server hung up")
		}
		time.Sleep(time.Millisecond) // polls for the reader's failure
	}
	s.pool.mu.Lock()
	defer s.pool.mu.Unlock()
	if err := s.pool.addLocked(c); err == nil { // as dial does after open
		t.Error("adding the dead connection: got nil, want its error")
	}
	if n := len(s.pool.conns); n != 0 {
		t.Errorf("connections in the pool: got %d, want the dead one left out", n)
	}
}

// TestH2DialBackoff: after a failed dial the pool dials again only after
// dialBackoff, on its clock: sends meanwhile fail at once, unprocessed.
func TestH2DialBackoff(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var dials atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			dials.Add(1)
			_ = nc.Close() // sheds every connection
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	p, err := newH2Pool(transportConfig{scheme: "http", host: ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_000_000, 0)
	p.now = func() time.Time { return now }
	sendAll := func() {
		t.Helper()
		var wg sync.WaitGroup
		for range 300 {
			wg.Go(func() {
				if _, err := p.post(t.Context(), time.Time{}, "/x", "Bearer t", nil); !errors.Is(err, errUnprocessed) {
					t.Errorf("got %v, want errUnprocessed", err)
				}
			})
		}
		wg.Wait()
	}
	sendAll()
	if got := dials.Load(); got != 1 {
		t.Errorf("dials of 300 sends in one moment: got %d, want 1", got)
	}
	now = now.Add(dialBackoff(1))
	sendAll()
	if got := dials.Load(); got != 2 {
		t.Errorf("dials after the backoff: got %d, want 2", got)
	}
}

// TestDialBackoff: 10 ms doubling to 5 s.
func TestDialBackoff(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		fails int
		want  time.Duration
	}{{1, 10 * time.Millisecond}, {2, 20 * time.Millisecond}, {5, 160 * time.Millisecond}, {10, 5 * time.Second}, {100, 5 * time.Second}} {
		if got := dialBackoff(tt.fails); got != tt.want {
			t.Errorf("dialBackoff(%d): got %v, want %v", tt.fails, got, tt.want)
		}
	}
}

// TestH2StalledSendNotWritten: on a connection whose server reads
// nothing (a pipe: no write gets through), a send whose request does not
// fit in maxPending beside what waits to be written waits for room only
// until its deadline and fails unprocessed (errWriteStalled), never given
// a stream; the connection is retired. (Before, it waited in Flush,
// holding the write lock, until the PING check closed the connection.)
func TestH2StalledSendNotWritten(t *testing.T) {
	t.Parallel()
	client, server := net.Pipe()
	t.Cleanup(func() { _ = server.Close() })
	sent := make(chan error, 1)
	go func() { // the server's SETTINGS and a large window; then it reads nothing
		fr := http2.NewFramer(server, server)
		err := fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 30})
		if err == nil {
			err = fr.WriteWindowUpdate(0, 1<<30)
		}
		sent <- err
	}()
	p, err := newH2Pool(transportConfig{scheme: "http", host: "fcm.test"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := startH2Conn(p, newCoalescingConn(client))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.close(errConnIdle) })
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	p.conns = append(p.conns, c)
	// PINGs fill the coalescing buffer: the writer, stuck on its first
	// write for good, takes no more of it.
	body := bytes.Repeat([]byte("x"), maxPending*6/10)
	for c.nc.size.Load() < int64(len(body)) {
		c.write(func() error { return c.fr.WritePing(false, [8]byte{}) })
	}
	// A request with such a body does not fit in maxPending beside them.
	_, err = p.post(t.Context(), time.Now().Add(100*time.Millisecond), "/x", "Bearer t", body)
	if !errors.Is(err, errUnprocessed) || !errors.Is(err, errWriteStalled) {
		t.Errorf("send behind the stalled buffer: got %v, want errUnprocessed and errWriteStalled", err)
	}
	c.mu.Lock()
	nextID, retired := c.nextID, c.retired
	c.mu.Unlock()
	if nextID != 1 {
		t.Errorf("next stream id: got %d, want 1 (no stream opened)", nextID)
	}
	if !retired {
		t.Error("the stalled connection still takes streams")
	}
}
