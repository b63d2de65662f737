package fcm

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"
)

// The client's HTTP/2 settings, as net/http's transport had them.
const (
	// h2IdleTimeout closes a connection that carried no stream that long.
	h2IdleTimeout = 90 * time.Second
	// h2PingAfter is how long a connection with open streams may stay
	// silent before it is sent a PING; h2PingTimeout how long the PING's
	// ack may take before the connection is taken for dead.
	h2PingAfter   = 30 * time.Second
	h2PingTimeout = 10 * time.Second
	// h2DialTimeout bounds the TCP dial and, separately, the TLS handshake.
	h2DialTimeout = 10 * time.Second
)

// h2Pool sends requests to one origin over HTTP/2 connections it dials
// itself: the lean client of FCM's messages:send. net/http's client spent
// a goroutine, two write system calls, channel hand-offs and a dozen
// allocations on every request; here the caller's goroutine encodes and
// writes its own frames (gathered with other streams' by coalescingConn)
// and waits for its stream's answer, which the connection's one reader
// goroutine collects. Streams are multiplexed on a connection up to the
// peer's SETTINGS_MAX_CONCURRENT_STREAMS; another connection is dialed
// when every connection is full.
type h2Pool struct {
	addr      string      // host:port dialed
	authority string      // the :authority of every request
	scheme    string      // "http" (cleartext, prior knowledge) or "https"
	tls       *tls.Config // nil for cleartext
	dialer    net.Dialer
	proxy     proxyFunc // nil: no proxy

	// Timings and last stream id of every connection (the h2 constants;
	// tests lower them).
	idleTimeout, pingAfter, pingTimeout time.Duration
	maxStreamID                         uint32

	// now is the clock of the dial backoff (time.Now; tests stop it).
	now func() time.Time

	mu      sync.Mutex
	conns   []*h2Conn
	dialing *h2Dial // the dial in progress, if any
	// After a failed dial, none is tried before dialAfter: the sends
	// meanwhile fail with dialErr, the last dial's error.
	dialFails int
	dialAfter time.Time
	dialErr   error
}

// h2Dial is a dial in progress, shared by the requests waiting for it.
type h2Dial struct {
	done chan struct{}
	err  error // once done
}

// newH2Pool returns a pool for the origin of an FCM endpoint: its scheme
// ("http" or "https") and host. An https origin is dialed with TLS on the system's
// roots and must agree to HTTP/2 in ALPN.
func newH2Pool(cfg transportConfig) (*h2Pool, error) {
	scheme, host := cfg.scheme, cfg.host
	p := &h2Pool{
		authority:   host,
		scheme:      scheme,
		proxy:       cfg.proxy,
		dialer:      net.Dialer{Timeout: h2DialTimeout, KeepAlive: 30 * time.Second},
		idleTimeout: h2IdleTimeout,
		pingAfter:   h2PingAfter,
		pingTimeout: h2PingTimeout,
		maxStreamID: h2MaxStreamID,
		now:         time.Now,
	}
	hostname, port, err := net.SplitHostPort(host)
	if err != nil {
		hostname, port = host, ""
	}
	switch scheme {
	case "http":
		port = cmp.Or(port, "80")
	case "https":
		port = cmp.Or(port, "443")
		p.tls = &tls.Config{MinVersion: tls.VersionTLS12}
		if cfg.tlsConfig != nil {
			p.tls = cfg.tlsConfig.Clone()
		}
		p.tls.ServerName, p.tls.NextProtos = hostname, []string{"h2"}
	default:
		return nil, fmt.Errorf("fcm: endpoint scheme %q is neither http nor https", scheme)
	}
	if hostname == "" {
		return nil, errors.New("fcm: endpoint has no host")
	}
	p.addr = net.JoinHostPort(trimBrackets(hostname), port)
	return p, nil
}

// trimBrackets turns an IPv6 literal "[::1]" (a host without a port) into
// "::1" for JoinHostPort.
func trimBrackets(h string) string {
	if len(h) > 1 && h[0] == '[' && h[len(h)-1] == ']' {
		return h[1 : len(h)-1]
	}
	return h
}

// post sends one POST to path with the given authorization and JSON body
// and returns the answer. A request the server did not process (its
// stream refused, or above a GOAWAY's last stream) is sent again, after
// retryBackoff and on another connection than the one that refused it,
// while its deadline allows (without one, at most h2MaxAttempts times). When ctx
// ends or the deadline (zero: none) passes first, the stream is reset and
// ctx's error returned (context.DeadlineExceeded for the deadline): the
// request may have reached the server. When the status arrived but the
// body was cut off, the response comes with the error.
func (p *h2Pool) post(ctx context.Context, deadline time.Time, path, authorization string, body []byte) (response, error) {
	if err := ctx.Err(); err != nil {
		return response{}, err
	}
	var refused *h2Conn
	for attempt := 1; ; attempt++ {
		c, err := p.conn(ctx, deadline, refused)
		if err != nil {
			return response{}, err
		}
		resp, err := c.roundTrip(ctx, deadline, path, authorization, body)
		if err == nil || !errors.Is(err, errUnprocessed) || (deadline.IsZero() && attempt == h2MaxAttempts) ||
			!pause(ctx, deadline, retryBackoff(attempt)) {
			return resp, err
		}
		refused = c
	}
}

// h2MaxAttempts bounds the sends of a request the server keeps refusing
// unprocessed, for a send without a deadline.
const h2MaxAttempts = 10

// retryBackoff is the wait before the next send of a request the server
// did not process, after attempt sends: none after the first (another
// connection usually takes it at once: a GOAWAY is not meant for it),
// then 10 ms doubling to at most a second.
func retryBackoff(attempt int) time.Duration {
	if attempt <= 1 {
		return 0
	}
	return min(10*time.Millisecond<<min(attempt-2, 10), time.Second)
}

// pause waits d, unless ctx ends first or the deadline (zero: none) is
// less than d away; it reports whether it waited.
func pause(ctx context.Context, deadline time.Time, d time.Duration) bool {
	if !deadline.IsZero() && !time.Now().Add(d).Before(deadline) {
		return false
	}
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// conn returns a connection with a stream reserved for the caller,
// dialing one when every connection is full. A connection that refused
// the caller's request (avoid; nil: none) is not taken. Concurrent
// callers share one dial; each waits for it until ctx ends or the
// deadline (zero: none) passes.
func (p *h2Pool) conn(ctx context.Context, deadline time.Time, avoid *h2Conn) (*h2Conn, error) {
	for {
		p.mu.Lock()
		for _, c := range p.conns {
			if c != avoid && c.reserve() {
				p.mu.Unlock()
				return c, nil
			}
		}
		d := p.dialing
		if d == nil {
			if p.dialFails > 0 && p.now().Before(p.dialAfter) {
				err := p.dialErr
				p.mu.Unlock()
				return nil, err
			}
			d = &h2Dial{done: make(chan struct{})}
			p.dialing = d
			go p.dial(d)
		}
		p.mu.Unlock()
		if err := d.wait(ctx, deadline); err != nil {
			return nil, err
		}
	}
}

// wait waits for the dial to end, ctx to end or the deadline (zero: none)
// to pass, and returns the first's error.
func (d *h2Dial) wait(ctx context.Context, deadline time.Time) error {
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	select {
	case <-d.done:
		return d.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// dial opens a connection and adds it to the pool; d reports how it went
// to the callers waiting for it. It runs on its own goroutine, so one
// caller's cancellation does not fail the others' dial. A failed dial
// holds the next one back for dialBackoff. Its error is errUnprocessed:
// no request was written.
func (p *h2Pool) dial(d *h2Dial) {
	c, err := p.open()
	p.mu.Lock()
	p.dialing = nil
	if err == nil {
		err = p.addLocked(c)
	}
	if err == nil {
		p.dialFails = 0
	} else {
		p.dialFails++
		p.dialAfter = p.now().Add(dialBackoff(p.dialFails))
		err = fmt.Errorf("%w: connect to %s: %w", errUnprocessed, p.addr, err)
		p.dialErr = err
	}
	p.mu.Unlock()
	d.err = err
	close(d.done)
}

// addLocked adds c, just opened, to the pool (p.mu held), unless it
// closed already: its close found nothing to remove, and it would stay in
// the pool for good. A close after this finds it (remove waits for p.mu).
func (p *h2Pool) addLocked(c *h2Conn) error {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return err
	}
	p.conns = append(p.conns, c)
	return nil
}

// dialBackoff is how long after fails failed dials in a row the next is
// tried: 10 ms doubling to 5 s, so a server that sheds every connection
// is not dialed by every send.
func dialBackoff(fails int) time.Duration {
	return min(10*time.Millisecond<<min(max(fails-1, 0), 10), 5*time.Second)
}

// open dials and starts one connection.
func (p *h2Pool) open() (*h2Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), h2DialTimeout)
	defer cancel()
	nc, err := p.dialTCP(ctx)
	if err != nil {
		return nil, err
	}
	if p.tls != nil {
		tc := tls.Client(nc, p.tls)
		// The handshake has its own timeout, as the transport's had.
		hctx, hcancel := context.WithTimeout(context.Background(), h2DialTimeout)
		err := tc.HandshakeContext(hctx)
		hcancel()
		if err == nil && tc.ConnectionState().NegotiatedProtocol != "h2" {
			err = fmt.Errorf("server did not agree to HTTP/2 (ALPN %q)", tc.ConnectionState().NegotiatedProtocol)
		}
		if err != nil {
			_ = tc.Close()
			return nil, err
		}
		nc = tc
	}
	c, err := startH2Conn(p, newCoalescingConn(nc))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	none := c.maxStreams == 0
	c.mu.Unlock()
	if none {
		// SETTINGS_MAX_CONCURRENT_STREAMS 0: the waiting callers would
		// dial without end.
		err := errors.New("the server allows no stream")
		c.close(err)
		return nil, err
	}
	return c, nil
}

// remove drops c from the pool: it takes no more streams.
func (p *h2Pool) remove(c *h2Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i := slices.Index(p.conns, c); i >= 0 {
		p.conns = slices.Delete(p.conns, i, i+1)
	}
}

// closeIdle closes the connections that carry no stream.
func (p *h2Pool) closeIdle() {
	p.mu.Lock()
	var idle []*h2Conn
	p.conns = slices.DeleteFunc(p.conns, func(c *h2Conn) bool {
		if c.retireIfIdle() {
			idle = append(idle, c)
			return true
		}
		return false
	})
	p.mu.Unlock()
	for _, c := range idle {
		c.close(errConnIdle)
	}
}
